import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/node/cli/app.js";
import { OFFLINE_LABEL } from "../../src/node/cli/model.js";
import { checkTrace, fakeIO, makeRepo } from "./fixture.js";

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
