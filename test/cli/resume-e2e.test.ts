/**
 * Issue 33 under a real pseudo-terminal (tmux), as a new user would meet it:
 * - defect 9: the CLI is killed (SIGKILL) mid-run; `--resume` draws the restored session once, as
 *   the live run drew it (tool rows with their arguments, markdown rendered and wrapped at word
 *   boundaries), one "restored" divider, and a footer that counts the run's turns;
 * - R84: a second `--resume` of a session another CLI has open exits 2 with one sentence naming
 *   that process's pid; once the first exits, the second resumes and the transcript holds every run.
 */
import { describe, expect, it } from "vitest";
import { tmuxCli } from "./tmux-cli.js";

const WIDTH = 100;
const { available: TMUX, start } = tmuxCli({ file: "test/cli/resume-e2e.test.ts", width: WIDTH, height: 50, timeoutMs: 30_000 });

const count = (screen: string, text: string) => screen.split(text).length - 1;
const between = (screen: string, from: string, to: string) => screen.slice(screen.indexOf(from), screen.indexOf(to, screen.indexOf(from)));

describe.skipIf(!TMUX)("issue 33: the CLI's resume screen and one process per session", () => {
  it("defect 9: killed mid-run, --resume draws the run once as it was drawn live, one divider, a footer with its turns", async () => {
    const first = start("first", "--offline");
    await first.until("the prompt", (screen) => screen.includes("❯ ask something"));
    first.keys("-l", "summarize this repository");
    first.keys("Enter");
    // Mid-run: three tools ran, the write waits for its approval.
    const live = await first.until("the write question", (screen) => screen.includes("? allow write_file to write agent-notes.md"));
    process.kill(first.cliPid(), "SIGKILL");
    await first.until("the kill", (screen) => screen.includes("EXITED 137"));
    const liveRows = live.split("\n").filter((row) => /^ {2}✓ /.test(row)).map((row) => row.replace(/ · [\d.]+m?s · /, " · "));
    expect(liveRows).toHaveLength(3);

    const second = start("second", "--offline --resume");
    const restored = await second.until("the question again", (screen) => screen.includes("? allow write_file to write agent-notes.md"));
    const drawn = between(restored, "resuming session", "? allow write_file");
    // Drawn once: the prompt, the model's text, each tool row (with its arguments, as live).
    expect(count(drawn, "❯ summarize this repository")).toBe(1);
    expect(count(drawn, "Let me look around first")).toBe(1);
    for (const row of liveRows) expect(count(drawn.replace(/ · [\d.]+m?s · /g, " · "), row), row).toBe(1);
    expect(drawn).not.toMatch(/✓ \w+ \?/);
    // Markdown rendered as the live run rendered it (no backticks, no asterisks).
    expect(drawn).toContain("Let me look around first: the file tree, package.json and the TODOs, all at once.");
    expect(drawn).not.toMatch(/[`*]/);
    second.keys("y");
    const done = await second.until("the footer", (screen) => /── \d+ turns? · /.test(screen));
    const screen = between(done, "resuming session", "❯ ask something");
    expect(count(screen, "── (restored from the session)")).toBe(1);
    // The answer after the resume: once, rendered, wrapped at word boundaries.
    expect(count(screen, "Here is what I found in tiny-repo:")).toBe(1);
    const answer = between(screen, "Here is what I found", "── ");
    expect(answer).not.toMatch(/[`*]/);
    const rows = answer.split("\n").filter(Boolean);
    for (const row of rows) expect(row.length, row).toBeLessThan(WIDTH);
    // Wrapped between words: joined again at the breaks, the rows give the sentences back.
    const joined = rows.join(" ");
    expect(joined).toContain("The tree has 6 files in 2 directories (node_modules and .git not counted); at the top: README.md, package.json, src/, test/.");
    expect(joined).toContain('package.json: tiny-repo 2.0.0 — "A tiny repository"; 0 dependencies, scripts test.');
    // The footer counts the run's turns: the three before the kill, the answer after it.
    expect(screen).toMatch(/── 3 turns · 4 tool calls · /);
    second.keys("-l", "/exit");
    second.keys("Enter");
    await second.until("the exit", (screen) => screen.includes("EXITED 0"));
  }, 120_000);

  it("R84: a second --resume of an open session exits 2 naming its pid; after the first exits it resumes with every run", async () => {
    const a = start("a", "--offline --resume");
    await a.until("A at its prompt", (screen) => screen.includes("❯ ask something"));
    const pid = a.cliPid();
    const b = start("b", "--offline --resume");
    const refused = await b.until("B refused", (screen) => screen.includes("EXITED"));
    expect(refused).toContain("EXITED 2");
    // The message is one line; a pid of another length moves tmux's soft wrap, so match it joined.
    expect(b.joined()).toMatch(new RegExp(`error: --resume: session \\S+ is open in another process \\(pid ${pid}\\); quit it there first`));
    // A goes on with a run of its own, then leaves.
    a.keys("-l", "find the TODOs");
    a.keys("Enter");
    await a.until("A's run", (screen) => {
      const tail = screen.slice(screen.lastIndexOf("❯ find the TODOs"));
      return /── \d+ turns? · /.test(tail) && tail.includes("❯ ask something");
    });
    a.keys("-l", "/exit");
    a.keys("Enter");
    await a.until("A's exit", (screen) => screen.includes("EXITED 0"));

    const c = start("c", "--offline --resume");
    const again = await c.until("the session at its prompt", (screen) => screen.includes("❯ ask something"));
    const transcript = between(again, "resuming session", "── (restored from the session)");
    expect(count(transcript, "❯ summarize this repository")).toBe(1);
    expect(count(transcript, "❯ find the TODOs")).toBe(1);
    expect(transcript.indexOf("❯ summarize this repository")).toBeLessThan(transcript.indexOf("❯ find the TODOs"));
    expect(transcript).toContain("Here is what I found in tiny-repo:");
    c.keys("-l", "/exit");
    c.keys("Enter");
    await c.until("the exit", (screen) => screen.includes("EXITED 0"));
  }, 120_000);
});
