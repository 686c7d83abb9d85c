import { once } from "node:events";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { runCli } from "../../src/node/cli/app.js";
import { OFFLINE_LABEL } from "../../src/node/cli/model.js";
import { checkTrace, fakeIO, makeRepo, ttyIO } from "./fixture.js";

let root: string;
let cleanup: () => void;
beforeAll(() => ({ root, cleanup } = makeRepo()));
afterAll(() => cleanup());

describe("one-shot offline run", () => {
  it("streams an answer built from the real tool results, with tool lines, and exits 0", async () => {
    const { io, stdout } = fakeIO(root);
    expect(await runCli(["--offline", "summarize this repository"], io)).toBe(0);
    const out = stdout();
    expect(out).toContain(OFFLINE_LABEL);
    expect(out).toContain("❯ summarize this repository");
    // One parallel batch: three tool lines, each with a duration and a one-line result.
    expect(out).toMatch(/✓ list_files \. \(recursive\) · \d+ms · \.: 6 files, 2 directories/);
    expect(out).toMatch(/✓ read_file package\.json · \d+ms · package\.json \(\d+ lines\)/);
    expect(out).toMatch(/✓ search_text \/TODO\|FIXME\/ · \d+ms · 3 matches in 2 files \(6 searched\)/);
    // The demo steers and follows up by itself when there is no terminal.
    expect(out).toContain("↳ steering: Also count the test files. (sent by the demo)");
    expect(out).toContain('Steering received: "Also count the test files."');
    expect(out).toContain("there are 2 test files");
    expect(out).toContain("Here is what I found in **tiny-repo**");
    expect(out).toContain("`src/util.ts` (2)");
    expect(out).toMatch(/── 6 turns · 6 tool calls · [\d,]+ tokens .* · \$0 · /);
  });

  it("R63: --max-turns ends the run after that many turns, and the footer says why", async () => {
    const { io, stdout } = fakeIO(root);
    expect(await runCli(["--offline", "--max-turns", "1", "summarize this repository"], io)).toBe(0);
    expect(stdout()).toMatch(/── 1 turn · 3 tool calls · .* · ended: turn limit \(--max-turns\)/);
  });

  it("reads the prompt from stdin when none is given and stdin is not a terminal", async () => {
    const { io, stdout } = fakeIO(root, { input: "summarize this repository\n" });
    expect(await runCli(["--offline"], io)).toBe(0);
    expect(stdout()).toContain("Here is what I found");
  });

  it("shows a tool error and carries on (no package.json here)", async () => {
    const bare = makeRepo({ "notes.txt": "TODO: one\n" });
    try {
      const { io, stdout } = fakeIO(bare.root);
      expect(await runCli(["--offline", "summarize this repository"], io)).toBe(0);
      expect(stdout()).toContain("✗ read_file package.json · ");
      expect(stdout()).toContain("No such file: package.json");
      expect(stdout()).toContain("I could not read the file: No such file: package.json");
    } finally {
      bare.cleanup();
    }
  });
});

describe("write policy", () => {
  it("denies write_file without a terminal to ask", async () => {
    const { io, stdout } = fakeIO(root);
    await runCli(["--offline", "summarize this repository"], io);
    expect(stdout()).toContain(
      "✗ write_file agent-notes.md",
    );
    expect(stdout()).toContain("Permission denied: write_file needs confirmation and there is no terminal to ask (stdin is not a TTY); run with --yes to allow writes.");
    expect(existsSync(path.join(root, "agent-notes.md"))).toBe(false);
  });

  it("allows it with --yes", async () => {
    const repo = makeRepo();
    try {
      const { io, stdout } = fakeIO(repo.root);
      expect(await runCli(["--offline", "--yes", "summarize this repository"], io)).toBe(0);
      expect(stdout()).toMatch(/✓ write_file agent-notes\.md \(\d+ bytes\) · \d+ms · Created agent-notes\.md/);
      expect(readFileSync(path.join(repo.root, "agent-notes.md"), "utf8")).toMatch(/^# Notes\n\n- The tree has 6 files/);
    } finally {
      repo.cleanup();
    }
  });
});

describe("bad input", () => {
  it("unknown flag: usage and exit 2", async () => {
    const { io, stderr } = fakeIO(root);
    expect(await runCli(["--bogus"], io)).toBe(2);
    expect(stderr()).toMatch(/^error: Unknown option --bogus\.\n\nUsage: /);
  });

  it("a missing --cwd directory or trace directory: exit 2 with the reason", async () => {
    const missing = fakeIO(root);
    expect(await runCli(["--offline", "-C", "nope", "hi"], missing.io)).toBe(2);
    expect(missing.stderr()).toBe("error: no such directory: nope\n");
    const trace = fakeIO(root);
    expect(await runCli(["--offline", "--trace", "no/such/dir/t.jsonl", "hi"], trace.io)).toBe(2);
    expect(trace.stderr()).toMatch(/^error: cannot write the trace to .*no\/such\/dir\/t\.jsonl: its directory does not exist\n$/);
  });

  it("no prompt and nothing on stdin: exit 2", async () => {
    const { io, stderr } = fakeIO(root, { input: "" });
    expect(await runCli(["--offline"], io)).toBe(2);
    expect(stderr()).toMatch(/^error: no prompt/);
  });

  it("--help prints the usage with the keys", async () => {
    const { io, stdout } = fakeIO(root);
    expect(await runCli(["--help"], io)).toBe(0);
    expect(stdout()).toContain(">> text, Alt+Enter");
    expect(stdout()).toContain("Esc, Ctrl-C");
  });
});

describe("provider error", () => {
  let server: Server;
  let url: string;
  const requests: string[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      requests.push(JSON.stringify(request.headers));
      response.writeHead(401, { "content-type": "application/json" });
      response.end(JSON.stringify({ type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("prints the message and exits 1 in one-shot mode; the trace holds no key", async () => {
    const key = "sk-ant-test-0123456789abcdef";
    const tracePath = path.join(root, "error-trace.jsonl");
    const { io, stdout } = fakeIO(root, { env: { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: url } });
    expect(await runCli(["--trace", tracePath, "hello"], io)).toBe(1);
    expect(requests.some((headers) => headers.includes(key))).toBe(true);
    // The default model is in the price table now, so the label names it.
    expect(stdout()).toContain("Claude Sonnet 5.5 (claude-sonnet-5-5) via Anthropic");
    expect(stdout()).toMatch(/✗ error: .*invalid x-api-key/);
    const text = readFileSync(tracePath, "utf8");
    expect(text).not.toContain(key);
    const trace = checkTrace(text);
    expect(trace.events.at(-2)!.event).toMatchObject({ type: "turn_end", message: { stopReason: "error" } });
  });
});

describe("issue 16: the offline demo", () => {
  const updates = (file: string) => checkTrace(readFileSync(file, "utf8")).events.filter((record) => record.event.type === "message_update").length;

  it("a 100 KB prompt streams no more than a short one (the demo quotes it cut), and its echo is cut", async () => {
    const short = path.join(root, "..", `short-${process.pid}.jsonl`);
    const long = path.join(root, "..", `long-${process.pid}.jsonl`);
    try {
      const prompt = "summarize this repository ";
      expect(await runCli(["--offline", "--trace", short, prompt], fakeIO(root).io)).toBe(0);
      const big = fakeIO(root);
      const huge = prompt + "and more words ".repeat(7_000);
      expect(await runCli(["--offline", "--trace", long, huge], big.io)).toBe(0);
      // The same script; only the cut quote ("… (105,026 characters)") adds a few deltas.
      expect(updates(long)).toBeLessThanOrEqual(updates(short) + 40);
      expect(big.stdout()).toContain(`… (${huge.trim().length.toLocaleString("en-US")} characters in all)`);
      expect(big.stdout().length).toBeLessThan(20_000);
    } finally {
      rmSync(short, { force: true });
      rmSync(long, { force: true });
    }
  });

  it("counts in its answers agree in number (1 line in 1 file)", async () => {
    const one = makeRepo({ "package.json": '{"name":"one"}\n', "notes.txt": "TODO: one\n" });
    try {
      const { io, stdout } = fakeIO(one.root);
      expect(await runCli(["--offline", "summarize this repository"], io)).toBe(0);
      expect(stdout()).toContain("`TODO|FIXME` matches 1 line in 1 of 2 files");
      expect(stdout()).toContain("which has 1 of the 1 match.");
      expect(stdout()).toContain("notes.txt (1 line)");
      expect(stdout()).not.toMatch(/\b1 (lines|files|matches)\b/);
    } finally {
      one.cleanup();
    }
  });
});

describe("issue 16: --inspect never sends into the void", () => {
  const freePort = async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    return port;
  };

  /** A relay stand-in on 127.0.0.1: counts the inspection messages it receives. */
  async function relayOn(port: number) {
    const server = new WebSocketServer({ host: "127.0.0.1", port });
    await once(server, "listening");
    const messages: string[] = [];
    server.on("connection", (socket) => socket.on("message", (data) => messages.push(data.toString())));
    return { messages, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  it("a running relay: says where the session goes, and it gets there", async () => {
    const port = await freePort();
    const relay = await relayOn(port);
    try {
      const { io, stdout } = fakeIO(root);
      io.inspector = { url: `ws://127.0.0.1:${port}`, startRelay: () => Promise.reject(new Error("must not start one")) };
      expect(await runCli(["--offline", "--inspect=stately", "summarize this repository"], io)).toBe(0);
      expect(stdout()).toContain(`inspector: sending the session, its runs and tool calls to the relay at ws://127.0.0.1:${port}`);
      expect(relay.messages.length).toBeGreaterThan(10);
    } finally {
      await relay.stop();
    }
  });

  it("no relay: one is started, and the session reaches it", async () => {
    const port = await freePort();
    let relay: Awaited<ReturnType<typeof relayOn>> | undefined;
    try {
      const { io, stdout } = fakeIO(root);
      const started: number[] = [];
      io.inspector = {
        url: `ws://127.0.0.1:${port}`,
        startRelay: async (at) => {
          started.push(at);
          relay = await relayOn(at);
          return { stop: () => void relay!.stop() };
        },
      };
      expect(await runCli(["--offline", "--inspect=stately", "summarize this repository"], io)).toBe(0);
      expect(started).toEqual([port]);
      expect(stdout()).toContain(`to a relay started at ws://127.0.0.1:${port}, as none was running: open http://127.0.0.1:${port}`);
      expect(relay!.messages.length).toBeGreaterThan(10);
    } finally {
      await relay?.stop();
    }
  });

  it("--inspect (default): the live local inspector, its URL printed, gets the session's run and tool calls", async () => {
    const { io, stdout } = fakeIO(root);
    let live: import("../../src/inspector/index.js").LiveInspector | undefined;
    io.inspector = { live: { port: 0, onStart: (inspector) => (live = inspector) } };
    expect(await runCli(["--offline", "--inspect", "summarize this repository"], io)).toBe(0);
    expect(stdout()).toContain(`inspector: watch the session live at http://127.0.0.1:${live!.port}/`);
    const machines = new Set(live!.messages().flatMap((m) => (m.t === "actor" && m.machine ? [m.machine] : [])));
    expect([...machines].sort()).toEqual(["run", "session", "toolCall"]);
  });

  it("--inspect, interactive: the page opened before the first prompt gets the saved session's (empty) fork points; the CLI goes on", async () => {
    let live: import("../../src/inspector/index.js").LiveInspector | undefined;
    const tty = ttyIO(root, { inspector: { live: { port: 0, onStart: (inspector) => (live = inspector) } } });
    const exit = runCli(["--offline", "--inspect"], tty.io);
    await tty.ready;
    // The session is forkable from the start, but the store holds nothing of it until a prompt runs.
    const session = live!.messages().find((m) => m.t === "forkable")!.s;
    const points = await fetch(new URL(`/points?session=${encodeURIComponent(session)}`, live!.url));
    expect({ status: points.status, body: await points.json() }).toEqual({ status: 200, body: { points: [] } });
    expect(live!.forkPoints(session)).toEqual([]);
    tty.type("\x03");
    tty.type("\x03");
    expect(await exit).toBe(0);
  });

  it("no relay and none can start: a warning, and the run goes on without the inspector", async () => {
    const port = await freePort();
    const { io, stdout } = fakeIO(root);
    io.inspector = { url: `ws://127.0.0.1:${port}`, startRelay: () => Promise.reject(new Error("EADDRINUSE")) };
    expect(await runCli(["--offline", "--inspect=stately", "summarize this repository"], io)).toBe(0);
    expect(stdout()).toContain(`inspector: nothing listens on ws://127.0.0.1:${port} and a relay could not be started there (EADDRINUSE); continuing without the inspector.`);
    expect(stdout()).toContain("Here is what I found");
  });
});
