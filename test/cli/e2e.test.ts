/**
 * The terminal agent under a real pseudo-terminal (tmux): an interactive offline session where a
 * steering line is typed while a tool runs, a write is refused, and a second run is aborted with
 * Ctrl-C; then a second Ctrl-C exits. Asserts on the captured screen and on the trace.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireSystemBinary } from "../support/system-binary.js";
import { checkTrace, MAIN, makeRepo, STATE_HOME, TSX } from "./fixture.js";
import { waitForPane } from "../support/pane.js";

const TMUX = requireSystemBinary({ name: "tmux", debianPackage: "tmux", purpose: "the CLI's pseudo-terminal tests (test/cli/e2e.test.ts)" });
const SOCKET = `xal-e2e-${process.pid}`;
const tmux = (...args: string[]) => execFileSync(TMUX!, ["-L", SOCKET, ...args], { encoding: "utf8" });
/** The whole pane, scrollback included, wrapped lines joined. */
const capture = () => tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "agent");

const waitFor = (what: string, test: (screen: string) => boolean, timeoutMs = 15_000) => waitForPane(capture, what, test, timeoutMs);

const SPINNER = "[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]";
/** The text after the last occurrence of `marker` (what happened since). */
const after = (screen: string, marker: string) => screen.slice(screen.lastIndexOf(marker));

let repo: { root: string; cleanup: () => void };
let traceDir: string;
let tracePath: string;

beforeAll(() => {
  if (!TMUX) return;
  repo = makeRepo();
  // Outside the repository, which the demo searches.
  traceDir = mkdtempSync(path.join(tmpdir(), "xal-e2e-trace-"));
  tracePath = path.join(traceDir, "session.trace.jsonl");
  const command = [
    `env -u NO_COLOR -u ANTHROPIC_API_KEY XDG_STATE_HOME=${JSON.stringify(STATE_HOME)} TERM=xterm-256color`,
    JSON.stringify(process.execPath),
    JSON.stringify(TSX),
    JSON.stringify(MAIN),
    "--offline --trace",
    JSON.stringify(tracePath),
    '; echo "EXITED $?"; sleep 60',
  ].join(" ");
  tmux("new-session", "-d", "-x", "120", "-y", "40", "-s", "agent", "-c", repo.root, "-e", "TERM=xterm-256color", command);
});

afterAll(() => {
  if (!TMUX) return;
  try {
    tmux("kill-server");
  } catch {
    // already gone
  }
  repo.cleanup();
  rmSync(traceDir, { recursive: true, force: true });
});

describe.skipIf(!TMUX)("interactive session under a pseudo-terminal", () => {
  it("streams, steers, refuses a write, aborts a second run, then exits on a second Ctrl-C", async () => {
    await waitFor("the prompt", (screen) => screen.includes("❯ ask something"));
    tmux("send-keys", "-t", "agent", "-l", "summarize this repository");
    tmux("send-keys", "-t", "agent", "Enter");

    // A steering line typed while the search runs (its spinner is on screen).
    await waitFor("a running search", (screen) => new RegExp(`${SPINNER} search_text`).test(screen));
    tmux("send-keys", "-t", "agent", "-l", "focus on the tests");
    tmux("send-keys", "-t", "agent", "Enter");
    await waitFor("the steering acknowledgement", (screen) => screen.includes("↳ steering: focus on the tests"));
    // And a follow-up, for when the agent would otherwise stop.
    tmux("send-keys", "-t", "agent", "-l", ">> which file has the most matches?");
    tmux("send-keys", "-t", "agent", "Enter");
    await waitFor("the follow-up acknowledgement", (screen) => screen.includes("↳ follow-up queued: which file has the most matches?"));

    // The demo asks to write its notes: refuse.
    await waitFor("the write question", (screen) => screen.includes("? allow write_file to write agent-notes.md"));
    tmux("send-keys", "-t", "agent", "n");
    const first = await waitFor("the end of the first run", (screen) => /── \d+ turns/.test(screen) && screen.trimEnd().endsWith("❯ ask something (Ctrl-C twice to exit)"));

    // The streamed answer (markdown bold rendered, not shown as **), built from the real results.
    expect(first).toContain("Here is what I found in tiny-repo:");
    expect(first).toContain("TODO|FIXME matches 3 lines in 2 of 6 files; most in src/util.ts (2), src/main.ts (1).");
    // Tool lines with durations and one-line results; the parallel batch of three.
    expect(first).toMatch(/✓ list_files \. \(recursive\) · \d+ms · \.: 6 files, 2 directories/);
    expect(first).toMatch(/✓ read_file package\.json · \d+ms · package\.json \(\d+ lines\)/);
    expect(first).toMatch(/✓ search_text \/TODO\|FIXME\/ · \d\.\ds · 3 matches in 2 files \(6 searched\)/);
    // The steering message reached the model, which acted on it.
    expect(first).toContain('Steering received: "focus on the tests" — on it.');
    expect(first).toMatch(/✓ list_files \. \(recursive\) glob \*\.\{test,spec\}\.\* · \d+ms · \.: 2 files, 0 directories/);
    expect(first).toContain("You asked: \"focus on the tests\" — there are 2 test files");
    // The refused write.
    expect(first).toContain("✗ write_file agent-notes.md");
    expect(first).toContain("Permission denied: the user refused write_file.");

    // The follow-up ran after the answer, in the same run.
    expect(after(first, "Here is what I found")).toContain("Looking closer at src/util.ts, which has 2 of the 3 matches.");
    expect(first).toMatch(/✓ read_file src\/util\.ts:1-4 · \d+ms · src\/util\.ts \(3 lines\)/);

    // A second run, aborted with Ctrl-C while its tool runs.
    tmux("send-keys", "-t", "agent", "-l", "what about the utils?");
    tmux("send-keys", "-t", "agent", "Enter");
    await waitFor("the second run's tool", (screen) => new RegExp(`${SPINNER} search_text "utils"`).test(after(screen, "❯ what about the utils?")));
    tmux("send-keys", "-t", "agent", "C-c");
    const aborted = await waitFor("the end of the aborted run", (screen) => /── \d+ turns?/.test(after(screen, "❯ what about the utils?")));
    const second = after(aborted, "❯ what about the utils?");
    expect(second).toContain("⏹ aborting (Ctrl-C) — press Ctrl-C again to exit");
    expect(second).toMatch(/✗ search_text "utils" · \d+ms · /);
    expect(second).toMatch(/── \d+ turns? · 1 tool call · /);

    // The session goes on; a second Ctrl-C (idle) exits cleanly.
    await waitFor("the idle prompt", (screen) => screen.trimEnd().endsWith("❯ ask something (Ctrl-C twice to exit)"));
    tmux("send-keys", "-t", "agent", "C-c");
    await waitFor("the exit", (screen) => screen.includes("EXITED 0"));
    expect(capture()).not.toContain("(press Ctrl-C again to exit)");

    // The trace: the steering message as the model got it, and the aborted turn.
    const trace = checkTrace(readFileSync(tracePath, "utf8"));
    expect(trace.notes.map((note) => note.text)).toEqual(
      expect.arrayContaining([
        "steering queued: focus on the tests",
        "follow-up queued: which file has the most matches?",
        "abort requested (Ctrl-C)",
        "permission refused",
      ]),
    );
    const userMessages = trace.events
      .filter((record) => record.event.type === "message_start" && record.event.message.role === "user")
      .map((record) => record.event.message.content[0].text);
    expect(userMessages).toEqual(["summarize this repository", "focus on the tests", "which file has the most matches?", "what about the utils?"]);
    const abortedTurn = trace.events.find((record) => record.event.type === "turn_end" && record.event.message.stopReason === "aborted");
    expect(abortedTurn?.run).toBe(2);
    expect(trace.states.some((record) => record.actor === "run" && record.run === 2 && record.status === "done")).toBe(true);
  }, 60_000);
});

describe.skipIf(!TMUX)("Esc aborts; Ctrl-C on an idle prompt asks for a second one", () => {
  it("aborts with Esc, then exits on Ctrl-C, Ctrl-C", async () => {
    const session = "esc";
    const capturePane = () => tmux("capture-pane", "-p", "-J", "-S", "-", "-t", session);
    const waitOn = (what: string, test: (screen: string) => boolean) => waitForPane(capturePane, what, test, 15_000);
    const command = `env -u NO_COLOR -u ANTHROPIC_API_KEY XDG_STATE_HOME=${JSON.stringify(STATE_HOME)} ${JSON.stringify(process.execPath)} ${JSON.stringify(TSX)} ${JSON.stringify(MAIN)} --offline --no-streaming-tools; echo "EXITED $?"; sleep 60`;
    tmux("new-session", "-d", "-x", "100", "-y", "30", "-s", session, "-c", repo.root, "-e", "TERM=xterm-256color", command);
    await waitOn("the prompt", (screen) => screen.includes("❯ ask something"));
    tmux("send-keys", "-t", session, "-l", "summarize this repository");
    tmux("send-keys", "-t", session, "Enter");
    // Without streaming tools (R70), a call's spinner means it started: Esc then aborts a running call.
    await waitOn("a running search", (screen) => new RegExp(`${SPINNER} search_text`).test(screen));
    tmux("send-keys", "-t", session, "Escape");
    const screen = await waitOn("the abort", (text) => /── \d+ turns?/.test(text) && text.trimEnd().endsWith("❯ ask something (Ctrl-C twice to exit)"));
    expect(screen).toContain("⏹ aborting (Esc) — Ctrl-C twice exits");
    expect(screen).toContain("⏹ aborted: the run was stopped");
    expect(screen).toMatch(/✗ search_text \/TODO\|FIXME\/ · \d+ms · Aborted/);
    tmux("send-keys", "-t", session, "C-c");
    await waitOn("the exit hint", (text) => text.includes("(press Ctrl-C again to exit)"));
    tmux("send-keys", "-t", session, "C-c");
    await waitOn("the exit", (text) => text.includes("EXITED 0"));
  }, 40_000);
});
