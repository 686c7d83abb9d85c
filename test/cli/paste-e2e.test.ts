/**
 * Issue 16 under a real pseudo-terminal (tmux from PATH), 60 columns wide: the small texts
 * (`-m` named as typed, thinking marked in a pipe, /help kept local, plural counts, the footer
 * wrapped between its parts, the hint after Esc), then a 100 KB bracketed paste followed at once
 * by typed keys: the paste is one prompt, the keys a steering message of their own.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkTrace, MAIN, makeRepo, STATE_HOME, TSX } from "./fixture.js";
import { requireSystemBinary } from "../support/system-binary.js";
import { waitForPane } from "../support/pane.js";

// A one-line notice and a skip without tmux; with CI set its absence fails (test/support/system-binary.ts).
const TMUX = requireSystemBinary({ name: "tmux", debianPackage: "tmux", purpose: "the CLI's paste test (test/cli/paste-e2e.test.ts)" });
const hasTmux = TMUX !== undefined;

const SOCKET = `xal-paste-${process.pid}`;
const WIDTH = 60;
const tmux = (...args: string[]) => execFileSync(TMUX!, ["-L", SOCKET, ...args], { encoding: "utf8" });
/** The pane's rows as the terminal shows them (scrollback included, wrapped rows not joined). */
const rows = () => tmux("capture-pane", "-p", "-S", "-", "-t", "paste");
/** The same with wrapped rows joined: the text as printed. */
const text = () => tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "paste");
const keys = (...args: string[]) => tmux("send-keys", "-t", "paste", ...args);

const waitFor = (what: string, test: (screen: string) => boolean, timeoutMs = 30_000) => waitForPane(rows, what, test, timeoutMs, 50);
const after = (screen: string, marker: string) => screen.slice(screen.lastIndexOf(marker));
const SPINNER = "[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]";

let repo: { root: string; cleanup: () => void };
let dir: string;

beforeAll(() => {
  if (!hasTmux) return;
  // One TODO in one file: counts of one.
  repo = makeRepo({
    "package.json": JSON.stringify({ name: "one-todo", version: "1.0.0" }, null, 2) + "\n",
    "src/main.ts": "export function main() {\n  // TODO: parse arguments\n  return 0;\n}\n",
    "test/main.test.ts": "import { main } from '../src/main';\n",
  });
  dir = mkdtempSync(path.join(tmpdir(), "xal-paste-"));
  // `xa` runs the CLI; the shell prints a marker after each command.
  writeFileSync(path.join(dir, "xa"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(TSX)} ${JSON.stringify(MAIN)} "$@"\n`, { mode: 0o755 });
  tmux(
    "new-session", "-d", "-x", String(WIDTH), "-y", "40", "-s", "paste", "-c", repo.root,
    "-e", "TERM=xterm-256color",
    `env -u NO_COLOR -u ANTHROPIC_API_KEY XDG_STATE_HOME=${JSON.stringify(STATE_HOME)} PATH=${JSON.stringify(`${dir}:${process.env.PATH}`)} sh`,
  );
});

afterAll(() => {
  if (!hasTmux) return;
  try {
    tmux("kill-server");
  } catch {
    // already gone
  }
  repo.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!hasTmux)("issue 16: the prompt loop at 60 columns under tmux", () => {
  it("names -m as typed, marks piped thinking, keeps /help local, wraps the footer, and a 100 KB paste stays one prompt", async () => {
    await waitFor("the shell", (screen) => /[$#]/.test(screen));
    keys("-l", "xa -m; echo DONE-1");
    keys("Enter");
    expect(await waitFor("the usage error", (screen) => /\nDONE-1\n/.test(screen))).toContain("error: Option -m needs a value.");

    keys("-l", `xa --offline "summarize this repository" </dev/null | grep -c '^\\[thinking\\] The user asked'; echo DONE-2`);
    keys("Enter");
    expect(after(await waitFor("the piped run", (screen) => /\n\d+\nDONE-2\n/.test(screen)), "DONE-2").length).toBeGreaterThan(0);
    expect(rows()).toMatch(/\n1\nDONE-2\n/);

    const tracePath = path.join(dir, "session.jsonl");
    keys("-l", `xa --offline --trace ${tracePath}; echo EXITED $?`);
    keys("Enter");
    await waitFor("the prompt", (screen) => screen.includes("❯ ask something"));

    keys("-l", "/help");
    keys("Enter");
    await waitFor("the help", (screen) => screen.includes("commands: /help this help"));

    // A 100 KB paste with a line break in it, Enter, and a line typed straight after.
    const pasted = `${"pasted words ".repeat(7_700)}\nthe second line of the paste`;
    const bufferFile = path.join(dir, "paste.txt");
    writeFileSync(bufferFile, pasted);
    tmux("load-buffer", "-b", "big", bufferFile);
    tmux("paste-buffer", "-p", "-b", "big", "-t", "paste");
    keys("Enter");
    keys("-l", "typed after");
    keys("Enter");
    await waitFor("the write question", (screen) => screen.includes("? allow write_file to write"));
    keys("n");
    const first = await waitFor("the end of the run", (screen) => /\n── \d+ turns/.test(screen) && screen.trimEnd().endsWith("❯ ask something (Ctrl-C twice to exit)"));
    const printed = text();
    expect(printed).toContain(`… (${pasted.length.toLocaleString("en-US")} characters in all)`);
    expect(printed).toContain("↳ steering: typed after");

    // Counts of one, in the singular (the answer is word-wrapped: rows joined by spaces).
    const answer = printed.split("\n").join(" ");
    expect(answer).toContain("TODO|FIXME matches 1 line in 1 of 3 files");
    expect(answer).toContain("1 match in 1 file");
    expect(answer).not.toMatch(/\b1 (lines|files|matches)\b/);

    // The footer: every row fits, and breaks fall between its parts.
    const lines = first.split("\n");
    const start = lines.findIndex((line) => line.startsWith("── "));
    const footer = [lines[start], ...lines.slice(start + 1).filter((line, index, all) => all.slice(0, index + 1).every((row) => row.startsWith("   ")))];
    expect(footer.length).toBeGreaterThan(1);
    for (const row of footer) expect(row.length).toBeLessThanOrEqual(WIDTH);
    expect(footer.map((row) => row.trim()).join(" · ").replace(/^── /, "")).toMatch(/^\d+ turns · \d+ tool calls · [\d,]+ tokens \([\d,]+ in, [\d,]+ out\) · \$0 · [\d.]+m?s$/);

    // Esc aborts a second run; the hint does not speak of pressing Ctrl-C "again".
    keys("-l", "what about the utils?");
    keys("Enter");
    await waitFor("the second run's tool", (screen) => new RegExp(`${SPINNER} search_text`).test(after(screen, "❯ what about the utils?")));
    keys("Escape");
    await waitFor("the abort", (screen) => /── \d+ turns?/.test(after(screen, "❯ what about the utils?")));
    const second = after(text(), "❯ what about the utils?");
    expect(second).toContain("⏹ aborting (Esc) — Ctrl-C twice exits");
    expect(second).not.toContain("again");
    keys("C-c");
    await waitFor("the exit hint", (screen) => screen.includes("(press Ctrl-C again to exit)"));
    keys("C-c");
    await waitFor("the exit", (screen) => screen.includes("EXITED 0"));

    // No key merged into the paste: the model got the paste whole, then the typed line.
    const trace = checkTrace(readFileSync(tracePath, "utf8"));
    const userTexts = trace.events
      .filter((record) => record.event.type === "message_start" && record.event.message.role === "user")
      .map((record) => record.event.message.content[0].text as string);
    expect(userTexts).toEqual([pasted.trim(), "typed after", "what about the utils?"]);
  }, 120_000);
});
