/**
 * Issue 20 item 5 under a real pseudo-terminal (tmux): a write waits, the user leaves with /exit,
 * a new process resumes the session, is asked again, and y writes the file.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { requireSystemBinary } from "../support/system-binary.js";
import { MAIN, makeRepo, TSX } from "./fixture.js";
import { freshStateHome } from "./sessions-helpers.js";
import { waitForPane } from "../support/pane.js";

const TMUX = requireSystemBinary({ name: "tmux", debianPackage: "tmux", purpose: "the CLI's pseudo-terminal tests (test/cli/sessions-e2e.test.ts)" });
const SOCKET = `xal-sessions-e2e-${process.pid}`;
const tmux = (...args: string[]) => execFileSync(TMUX!, ["-L", SOCKET, ...args], { encoding: "utf8" });

const repo = makeRepo();
const stateHome = freshStateHome();
afterAll(() => {
  if (TMUX) {
    try {
      tmux("kill-server");
    } catch {
      // already gone
    }
  }
  repo.cleanup();
  rmSync(stateHome, { recursive: true, force: true });
});

/** Runs the CLI in a new tmux session; returns a waiter on its screen (scrollback included). */
function start(session: string, args: string) {
  const command = `env -u NO_COLOR -u ANTHROPIC_API_KEY XDG_STATE_HOME=${JSON.stringify(stateHome)} ${JSON.stringify(process.execPath)} ${JSON.stringify(TSX)} ${JSON.stringify(MAIN)} ${args}; echo "EXITED $?"; sleep 60`;
  tmux("new-session", "-d", "-x", "140", "-y", "40", "-s", session, "-c", repo.root, "-e", "TERM=xterm-256color", command);
  const capture = () => tmux("capture-pane", "-p", "-J", "-S", "-", "-t", session);
  return {
    keys: (...keys: string[]) => tmux("send-keys", "-t", session, ...keys),
    until: (what: string, test: (screen: string) => boolean, timeoutMs = 20_000): Promise<string> => waitForPane(capture, what, test, timeoutMs),
  };
}

describe.skipIf(!TMUX)("issue 20 item 5: leave while a write waits, resume, asked again", () => {
  it("/exit at the write question leaves it waiting; --resume in a new process asks again and y writes the file", async () => {
    const first = start("first", "--offline");
    await first.until("the prompt", (screen) => screen.includes("❯ ask something"));
    first.keys("-l", "summarize this repository");
    first.keys("Enter");
    await first.until("the write question", (screen) => screen.includes("? allow write_file to write agent-notes.md"));
    first.keys("-l", "/exit");
    first.keys("Enter");
    const left = await first.until("the exit", (screen) => screen.includes("EXITED 0"));
    expect(left).toMatch(/left with the write waiting: --resume \S+ asks again/);
    expect(existsSync(path.join(repo.root, "agent-notes.md"))).toBe(false);

    const second = start("second", "--offline --resume");
    const asked = await second.until("the question again", (screen) => screen.includes("? allow write_file to write agent-notes.md"));
    expect(asked).toContain("resuming session");
    expect(asked).toContain("❯ summarize this repository");
    second.keys("y");
    await second.until("the answer", (screen) => screen.includes("The notes are saved in"));
    second.keys("-l", "/exit");
    second.keys("Enter");
    await second.until("the exit", (screen) => screen.includes("EXITED 0"));
    expect(readFileSync(path.join(repo.root, "agent-notes.md"), "utf8")).toContain("tiny-repo");
  }, 60_000);
});
