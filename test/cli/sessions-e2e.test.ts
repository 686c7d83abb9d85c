/**
 * Issue 20 item 5 under a real pseudo-terminal (tmux): a write waits, the user leaves with /exit,
 * a new process resumes the session, is asked again, and y writes the file.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tmuxCli } from "./tmux-cli.js";

const { available: TMUX, repo, start } = tmuxCli({ file: "test/cli/sessions-e2e.test.ts", width: 140, height: 40, timeoutMs: 20_000, joinWraps: true });

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
