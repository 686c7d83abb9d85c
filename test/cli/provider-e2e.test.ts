/**
 * Issue 35 item 4 under a real pseudo-terminal (tmux): `--model openai:…` with `--base-url`
 * pointing at the local OpenAI Responses wire runs an interactive tool session end to end (the
 * model calls read_file, the result goes back, the answer streams in); and a missing key is one
 * line, exit 2.
 */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireSystemBinary } from "../support/system-binary.js";
import { waitForPane } from "../support/pane.js";
import { sseFrames, startWireServer, type WireServer } from "../support/wire-server.js";
import { openaiResponsesWire, WIRE_API_KEY } from "../ai-sdk/wires.js";
import { MAIN, makeRepo, STATE_HOME, TSX } from "./fixture.js";

const TMUX = requireSystemBinary({ name: "tmux", debianPackage: "tmux", purpose: "the CLI's pseudo-terminal tests (test/cli/provider-e2e.test.ts)" });
const SOCKET = `xal-provider-e2e-${process.pid}`;
const tmux = (...args: string[]) => execFileSync(TMUX!, ["-L", SOCKET, ...args], { encoding: "utf8" });
const capture = (target: string) => () => tmux("capture-pane", "-p", "-J", "-S", "-", "-t", target);

let repo: { root: string; cleanup: () => void };
let server: WireServer;

/** A tmux session running the CLI with `env` and `args`, then printing its exit code. */
function startCli(name: string, env: string, args: string) {
  const command = [
    `env -u NO_COLOR -u ANTHROPIC_API_KEY -u OPENAI_API_KEY -u OPENAI_BASE_URL ${env} XDG_STATE_HOME=${JSON.stringify(STATE_HOME)} TERM=xterm-256color`,
    JSON.stringify(process.execPath),
    JSON.stringify(TSX),
    JSON.stringify(MAIN),
    args,
    '; echo "EXITED $?"; sleep 60',
  ].join(" ");
  tmux("new-session", "-d", "-x", "120", "-y", "40", "-s", name, "-c", repo.root, "-e", "TERM=xterm-256color", command);
}

beforeAll(async () => {
  if (!TMUX) return;
  repo = makeRepo();
  server = await startWireServer();
});

afterAll(async () => {
  if (!TMUX) return;
  try {
    tmux("kill-server");
  } catch {
    // already gone
  }
  repo.cleanup();
  await server.close();
});

describe.skipIf(!TMUX)("--model openai:… under a pseudo-terminal", () => {
  it("runs a tool session against the local OpenAI wire: the call, its result sent back, the streamed answer; /exit exits 0", async () => {
    server.script(
      sseFrames(openaiResponsesWire.toolCalls([{ id: "call_r1", name: "read_file", chunks: ['{"path":', '"README.md"}'] }], undefined, "Let me read it.")),
      sseFrames(openaiResponsesWire.text(["The README says: ", "A tiny repository."])),
    );
    startCli("openai", `OPENAI_API_KEY=${WIRE_API_KEY}`, `--no-save --model openai:gpt-5-mini --base-url ${server.url}/v1`);
    const screen = capture("openai");
    const banner = await waitForPane(screen, "the prompt", (text) => text.includes("❯ ask something"), 20_000);
    expect(banner).toContain(`GPT-5 Mini (gpt-5-mini) via OpenAI Responses API at ${server.url}/v1`);
    tmux("send-keys", "-t", "openai", "-l", "what does the README say?");
    tmux("send-keys", "-t", "openai", "Enter");
    const done = await waitForPane(
      screen,
      "the answer and the next prompt",
      (text) => text.includes("The README says: A tiny repository.") && /── \d+ turns?/.test(text) && text.trimEnd().endsWith("❯ ask something (Ctrl-C twice to exit)"),
      20_000,
    );
    const run = done.slice(done.indexOf("what does the README say?"));
    // In order: the model's text, the tool call, the answer.
    const order = ["Let me read it.", "read_file", "The README says: A tiny repository."].map((needle) => run.indexOf(needle));
    expect(order.every((index) => index >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1].rawBody).toContain("A tiny repository.");
    expect(done).not.toContain(WIRE_API_KEY);

    tmux("send-keys", "-t", "openai", "-l", "/exit");
    tmux("send-keys", "-t", "openai", "Enter");
    await waitForPane(screen, "the exit", (text) => text.includes("EXITED 0"), 10_000);
  });

  it("a missing key: one error line naming OPENAI_API_KEY, exit 2, no request", async () => {
    const before = server.requests.length;
    startCli("nokey", "", "--no-save --model openai:gpt-5 hello");
    const text = await waitForPane(capture("nokey"), "the exit", (screen) => screen.includes("EXITED"), 20_000);
    const lines = text.split("\n").filter((line) => line.trim() !== "");
    expect(lines).toEqual(["error: --model openai:gpt-5 needs OPENAI_API_KEY in the environment.", "EXITED 2"]);
    expect(server.requests.length).toBe(before);
  });
});
