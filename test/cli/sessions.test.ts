/**
 * Issue 20 item 5: the terminal agent keeps durable sessions outside the workspace and asks for
 * writes through the approval state (R82). Store location and the tools' refusal of it, --no-save,
 * --sessions, --resume of a finished session and of one whose process was SIGKILLed mid-run,
 * y / n / a(lways this path), --yes, no terminal, and quitting while a write waits then resuming.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/node/cli/app.js";
import { directoryHash, formatSessionList, sessionStoreDir, STORE_FILE } from "../../src/node/cli/sessions.js";
import { openSqliteStore } from "../../src/sqlite.js";
import { StoreEngineUnavailableError } from "../../src/store/index.js";
import { checkTrace, fakeIO, MAIN, makeRepo, REPO } from "./fixture.js";
import { freshStateHome, terminal } from "./sessions-helpers.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A repository and a state home of its own. */
function setup() {
  const repo = makeRepo();
  const stateHome = freshStateHome();
  cleanups.push(repo.cleanup, () => rmSync(stateHome, { recursive: true, force: true }));
  return { root: repo.root, stateHome, env: { XDG_STATE_HOME: stateHome } };
}

const storeOf = (stateHome: string, root: string) => path.join(stateHome, "xstate-agent", directoryHash(root), STORE_FILE);

/** Reads the sessions of a store (and closes it). */
function sessionsIn(file: string) {
  const store = openSqliteStore(file);
  try {
    return store.listSessions();
  } finally {
    store.close();
  }
}

const NOTES = "agent-notes.md";

describe("issue 20 item 5: where sessions are kept", () => {
  it("a run is saved in $XDG_STATE_HOME/xstate-agent/<hash of the directory>/sessions.db, nothing in the workspace; the default is ~/.local/state", async () => {
    const { root, stateHome, env } = setup();
    const { io, stdout } = fakeIO(root, { env });
    expect(await runCli(["--offline", "summarize this repository"], io)).toBe(0);
    const file = storeOf(stateHome, root);
    expect(existsSync(file)).toBe(true);
    const [info, ...rest] = sessionsIn(file);
    expect(rest).toEqual([]);
    expect(info!.meta).toMatchObject({ cwd: root, firstPrompt: "summarize this repository", running: false });
    expect((info!.meta as { messages: number }).messages).toBeGreaterThan(4);
    expect(stdout()).toContain(`session ${info!.sessionId}`);
    expect(existsSync(path.join(root, ".local"))).toBe(false);
    expect(sessionStoreDir(root, { HOME: "/home/someone" })).toBe(path.join("/home/someone/.local/state/xstate-agent", directoryHash(root)));
    // Another directory, another store.
    expect(directoryHash(path.join(root, "src"))).not.toBe(directoryHash(root));
  });

  it("with cwd = $HOME the tools never see the store: the walks leave it out", async () => {
    const { root } = setup();
    const traceDir = mkdirSyncTemp();
    const trace = path.join(traceDir, "t.jsonl");
    // No XDG_STATE_HOME: the store is ~/.local/state/xstate-agent/<hash>, inside the workspace.
    const { io } = fakeIO(root, { env: { HOME: root, XDG_STATE_HOME: "" } });
    expect(await runCli(["--offline", "--trace", trace, "summarize this repository"], io)).toBe(0);
    const storeDir = path.join(root, ".local/state/xstate-agent", directoryHash(root));
    expect(existsSync(path.join(storeDir, STORE_FILE))).toBe(true);
    const ends = checkTrace(readFileSync(trace, "utf8")).events.filter((record) => record.event.type === "tool_execution_end");
    const listing = ends.find((record) => record.event.toolName === "list_files")!.event.result.details.entries as string[];
    // The whole xstate-agent directory (every directory's sessions) is left out; its parent is listed.
    expect(listing).toContain(".local/state/");
    expect(listing.filter((entry) => entry.includes("xstate-agent"))).toEqual([]);
    const search = ends.find((record) => record.event.toolName === "search_text")!.event.result.details;
    expect(JSON.stringify(search)).not.toContain("xstate-agent");
  });

  it("--no-save keeps nothing", async () => {
    const { root, stateHome, env } = setup();
    const { io, stdout } = fakeIO(root, { env });
    expect(await runCli(["--offline", "--no-save", "summarize this repository"], io)).toBe(0);
    expect(stdout()).toContain("not saved (--no-save)");
    expect(existsSync(path.join(stateHome, "xstate-agent"))).toBe(false);
    const contradiction = fakeIO(root, { env });
    expect(await runCli(["--no-save", "--resume"], contradiction.io)).toBe(2);
    expect(contradiction.stderr()).toContain("Options --no-save and --resume contradict each other; give one.");
  });

  it("no SQLite engine (Node 20 without better-sqlite3): a new session runs unsaved with a warning; --resume is an error (exit 2)", async () => {
    const { root, stateHome, env } = setup();
    const noEngine = () => {
      throw new StoreEngineUnavailableError(["node:sqlite", "better-sqlite3"], "none installed");
    };
    const run = fakeIO(root, { env });
    expect(await runCli(["--offline", "summarize this repository"], { ...run.io, openStore: noEngine })).toBe(0);
    expect(run.stdout()).toContain("⚠ sessions are not saved: no SQLite engine");
    expect(run.stdout()).toContain("Here is what I found");
    const resume = fakeIO(root, { env });
    expect(await runCli(["--offline", "--resume"], { ...resume.io, openStore: noEngine })).toBe(2);
    expect(resume.stderr()).toContain("cannot open the session store");
    expect(existsSync(path.join(stateHome, "xstate-agent"))).toBe(false);
  });

  it("--sessions lists id, last update, message count and first prompt, newest first; none: says so and creates nothing", async () => {
    const { root, stateHome, env } = setup();
    const empty = fakeIO(root, { env });
    expect(await runCli(["--sessions"], empty.io)).toBe(0);
    expect(empty.stdout()).toContain("No saved sessions for this directory");
    expect(existsSync(path.join(stateHome, "xstate-agent"))).toBe(false);

    expect(await runCli(["--offline", "summarize this repository"], fakeIO(root, { env }).io)).toBe(0);
    expect(await runCli(["--offline", "find the TODOs"], fakeIO(root, { env }).io)).toBe(0);
    const listed = fakeIO(root, { env });
    expect(await runCli(["--sessions"], listed.io)).toBe(0);
    const [newest, older] = sessionsIn(storeOf(stateHome, root));
    const rows = listed.stdout().trim().split("\n").slice(1);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(new RegExp(`^${newest!.sessionId}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d +\\d+ msgs  "find the TODOs"$`));
    expect(rows[1]).toMatch(new RegExp(`^${older!.sessionId}  .* +\\d+ msgs  "summarize this repository"$`));
  });
});

describe("R84: a store whose lock directory is not a directory (a hostile layout)", () => {
  it("--sessions still lists the sessions and says once why it cannot tell which are open elsewhere; --resume refuses with the typed error; nothing crashes", async () => {
    const { root, stateHome, env } = setup();
    expect(await runCli(["--offline", "summarize this repository"], fakeIO(root, { env }).io)).toBe(0);
    const file = storeOf(stateHome, root);
    rmSync(`${file}.locks`, { recursive: true, force: true });
    writeFileSync(`${file}.locks`, "not a directory");
    const [session] = sessionsIn(file);

    const listed = fakeIO(root, { env });
    expect(await runCli(["--sessions"], listed.io)).toBe(0);
    expect(listed.stdout()).toContain(session!.sessionId);
    expect(listed.stderr().split("warning: which sessions are open elsewhere is unknown: session ")).toHaveLength(2);
    expect(listed.stderr()).toContain(`${file}.locks is not usable`);

    const resumed = fakeIO(root, { env });
    expect(await runCli(["--offline", "--resume", session!.sessionId, "go on"], resumed.io)).toBe(2);
    expect(resumed.stderr()).toContain(`error: --resume: session ${session!.sessionId} of the store at ${file} cannot be locked`);
    expect(sessionsIn(file)).toEqual([session]);
  });
});

describe("issue 20 item 5: --resume", () => {
  it("--sessions marks a session whose stored meta is damaged, and still lists the others", () => {
    const row = (sessionId: string, extra: object = {}) => ({ sessionId, createdAt: 0, updatedAt: 0, records: 3, meta: { firstPrompt: "hi", messages: 2 }, ...extra });
    const rows = formatSessionList([row("a", { meta: null, damaged: new Error("meta is not JSON") }), row("b")], "/x/sessions.db").trim().split("\n").slice(1);
    expect(rows).toEqual([expect.stringMatching(/^a .* \(damaged\)  ""$/), expect.stringMatching(/^b .*2 msgs  "hi"$/)]);
  });

  it("continues the last finished session: its transcript is shown again and a prompt goes on from it", async () => {
    const { root, stateHome, env } = setup();
    expect(await runCli(["--offline", "summarize this repository"], fakeIO(root, { env }).io)).toBe(0);
    const [before] = sessionsIn(storeOf(stateHome, root));
    const resumed = fakeIO(root, { env });
    expect(await runCli(["--offline", "--resume", "last", "Which file has the most matches?"], resumed.io)).toBe(0);
    const out = resumed.stdout();
    expect(out).toContain(`resuming session ${before!.sessionId}`);
    const restored = out.slice(out.indexOf("resuming session"), out.indexOf("── (restored from the session)"));
    expect(restored).toContain("❯ summarize this repository");
    expect(restored).toMatch(/✓ list_files \. \(recursive\)/);
    expect(restored).toContain("Here is what I found");
    expect(out).toContain("(the session had no unfinished run)");
    expect(out).toContain("❯ Which file has the most matches?");
    const [after, ...others] = sessionsIn(storeOf(stateHome, root));
    expect(others).toEqual([]);
    expect(after!.sessionId).toBe(before!.sessionId);
    expect((after!.meta as { messages: number }).messages).toBeGreaterThan((before!.meta as { messages: number }).messages);
    // By id too.
    const byId = fakeIO(root, { env });
    expect(await runCli(["--offline", "--resume", before!.sessionId], byId.io)).toBe(0);
    expect(byId.stdout()).toContain("❯ Which file has the most matches?");
    // Resumed with a key: later prompts go to Claude, not to the model the session was started with.
    const withKey = fakeIO(root, { env: { ...env, ANTHROPIC_API_KEY: "sk-test-not-used" } });
    expect(await runCli(["--resume"], withKey.io)).toBe(0);
    expect(withKey.stdout()).toContain("the session used offline-demo; it continues with claude-");
  });

  it("an unknown id (or no session at all) is a clear error, exit code 2", async () => {
    const { root, env } = setup();
    const none = fakeIO(root, { env });
    expect(await runCli(["--offline", "--resume"], none.io)).toBe(2);
    expect(none.stderr()).toContain("--resume: no saved session for this directory (--sessions lists them)");
    const unknown = fakeIO(root, { env });
    expect(await runCli(["--offline", "--resume", "nope-1234"], unknown.io)).toBe(2);
    expect(unknown.stderr()).toContain('--resume: no session "nope-1234" for this directory (--sessions lists them)');
  });

  it("R84: a session another process has open is refused before anything runs (exit code 2)", async () => {
    const { root, stateHome, env } = setup();
    expect(await runCli(["--offline", "summarize this repository"], fakeIO(root, { env }).io)).toBe(0);
    const other = openSqliteStore(storeOf(stateHome, root));
    const [session] = other.listSessions();
    const writer = other.openSession(session!.sessionId);
    try {
      const second = fakeIO(root, { env });
      expect(await runCli(["--offline", "--resume", "last", "more"], second.io)).toBe(2);
      expect(second.stderr()).toBe(`error: --resume: session ${session!.sessionId} is open in another process (pid ${process.pid}); quit it there first, or resume another session (--sessions lists them)\n`);
      expect(second.stdout()).toBe("");
    } finally {
      writer.release();
      other.close();
    }
    expect(sessionsIn(storeOf(stateHome, root))[0]!.records).toBe(session!.records);
  });

  it("continues a session whose process was SIGKILLed mid-run (R81): done steps are not run again, the run completes", async () => {
    const { root, stateHome, env } = setup();
    // `--import tsx`, not tsx's CLI: that one runs the program in a grandchild the kill would miss.
    const child = spawn(process.execPath, ["--import", pathToFileURL(path.join(REPO, "node_modules/tsx/dist/loader.mjs")).href, MAIN, "--offline", "summarize this repository"], {
      cwd: root,
      env: { ...process.env, ...env, NO_COLOR: "1", ANTHROPIC_API_KEY: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    // Killed while search_text runs (the demo paces it over 1 s): list_files and read_file are done.
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8");
        if (/✓ read_file/.test(out) && /✓ list_files/.test(out) && !/✓ search_text/.test(out)) {
          child.kill("SIGKILL");
          resolve();
        }
      });
      let errors = "";
      child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString("utf8")));
      child.on("exit", () => reject(new Error(`the child ended before it was killed:\n${out}\n${errors}`)));
    });
    await new Promise((resolve) => child.once("close", resolve));
    expect(child.signalCode).toBe("SIGKILL");
    const [killed] = sessionsIn(storeOf(stateHome, root));
    expect(killed!.meta).toMatchObject({ running: true });
    const listed = fakeIO(root, { env });
    await runCli(["--sessions"], listed.io);
    expect(listed.stdout()).toContain("(interrupted)");

    const resumed = fakeIO(root, { env });
    expect(await runCli(["--offline", "--resume"], resumed.io)).toBe(0);
    const text = resumed.stdout();
    expect(text).toContain(`resuming session ${killed!.sessionId}`);
    expect(text).toContain("❯ summarize this repository");
    // The replayed part is shown once it is live; the search in flight had no outcome: it only
    // reads (replay: "safe"), so it runs again (R13).
    expect(text).toMatch(/✓ list_files \. \(recursive\)/);
    expect(text).not.toContain("was interrupted before it finished");
    expect(text).toMatch(/✓ search_text/);
    // No terminal: the write is rejected at once; the run goes on to its answer.
    expect(text).toContain("no terminal to ask");
    expect(text).toContain("Here is what I found");
    expect(text).not.toContain("(the session had no unfinished run)");
    const [after] = sessionsIn(storeOf(stateHome, root));
    expect(after!.meta).toMatchObject({ running: false });
    expect(existsSync(path.join(root, NOTES))).toBe(false);
  }, 60_000);
});

describe("issue 20 item 5: write_file asks through the approval state (R82)", () => {
  it("y approves: the file is written", async () => {
    const { root, env } = setup();
    const cli = await terminal(root, ["--offline"], env);
    cli.type("summarize this repository\r");
    await cli.until("? allow write_file to write agent-notes.md");
    cli.type("y");
    await cli.until("  allowed");
    await cli.until("tool calls");
    cli.type("/exit\r");
    expect(await cli.exit).toBe(0);
    expect(readFileSync(path.join(root, NOTES), "utf8")).toContain("tiny-repo");
  });

  it("n rejects: the model gets the refusal, nothing is written", async () => {
    const { root, env } = setup();
    const cli = await terminal(root, ["--offline"], env);
    cli.type("summarize this repository\r");
    await cli.until("? allow write_file to write agent-notes.md");
    cli.type("n");
    await cli.until("  refused");
    await cli.until("I could not save the notes: Permission denied: the user refused write_file.");
    cli.type("/exit\r");
    expect(await cli.exit).toBe(0);
    expect(existsSync(path.join(root, NOTES))).toBe(false);
  });

  it("a approves this path for the rest of the session: the rule is kept with the session", async () => {
    const { root, stateHome, env } = setup();
    const cli = await terminal(root, ["--offline"], env);
    cli.type("summarize this repository\r");
    await cli.until("? allow write_file to write agent-notes.md");
    cli.type("a");
    await cli.until("  allowed (always, for this path)");
    await cli.until("tool calls");
    cli.type("/exit\r");
    expect(await cli.exit).toBe(0);
    expect(existsSync(path.join(root, NOTES))).toBe(true);
    const store = openSqliteStore(storeOf(stateHome, root));
    try {
      const [session] = store.listSessions();
      expect(JSON.stringify(store.readSession(session!.sessionId).snapshot()?.snapshot)).toContain('{"toolName":"write_file","path":"agent-notes.md"}');
    } finally {
      store.close();
    }
  });

  it("--yes approves writes up front (no question); no terminal rejects them at once with the reason", async () => {
    const { root, env } = setup();
    const yes = fakeIO(root, { env });
    expect(await runCli(["--offline", "--yes", "summarize this repository"], yes.io)).toBe(0);
    expect(yes.stdout()).not.toContain("? allow");
    expect(yes.stdout()).toMatch(/✓ write_file agent-notes\.md \(\d+ bytes\) · \d+ms · Created agent-notes\.md/);
    rmSync(path.join(root, NOTES));
    const piped = fakeIO(root, { env });
    expect(await runCli(["--offline", "summarize this repository"], piped.io)).toBe(0);
    expect(piped.stdout()).not.toContain("? allow");
    expect(piped.stdout()).toContain("Permission denied: write_file needs confirmation and there is no terminal to ask (stdin is not a TTY); run with --yes to allow writes.");
    expect(existsSync(path.join(root, NOTES))).toBe(false);
  });

  it("quitting while a write waits, then --resume: asked again from pendingApprovals (no second request event), y writes it once", async () => {
    const { root, env } = setup();
    const traceDir = mkdirSyncTemp();
    const first = await terminal(root, ["--offline"], env);
    first.type("summarize this repository\r");
    await first.until("? allow write_file to write agent-notes.md");
    first.type("/exit\r");
    expect(await first.exit).toBe(0);
    expect(first.screen()).toMatch(/left with the write waiting: --resume \S+ asks again/);
    expect(existsSync(path.join(root, NOTES))).toBe(false);

    const trace = path.join(traceDir, "resumed.jsonl");
    const second = await terminal(root, ["--offline", "--resume", "--trace", trace], env);
    await second.until("? allow write_file to write agent-notes.md");
    expect(second.screen()).toContain("❯ summarize this repository");
    second.type("y");
    await second.until("  allowed");
    await second.until("The notes are saved in");
    second.type("/exit\r");
    expect(await second.exit).toBe(0);
    expect(readFileSync(path.join(root, NOTES), "utf8")).toContain("tiny-repo");
    const notes = checkTrace(readFileSync(trace, "utf8")).notes.map((record) => record.text as string);
    // Asked from the waiting call in the state: the resumed run emitted no tool_approval_requested.
    expect(notes.filter((note) => note.startsWith("permission asked"))).toHaveLength(1);
    expect(notes.filter((note) => note.includes("waits for approval"))).toEqual([]);
    expect(notes.filter((note) => note.startsWith("approval approved"))).toHaveLength(1);
  });

  it("Ctrl-D at the question leaves it waiting too; --resume --yes approves the waiting write without asking", async () => {
    const { root, env } = setup();
    const first = await terminal(root, ["--offline"], env);
    first.type("summarize this repository\r");
    await first.until("? allow write_file to write agent-notes.md");
    first.type("\x04");
    expect(await first.exit).toBe(0);
    expect(existsSync(path.join(root, NOTES))).toBe(false);
    const resumed = fakeIO(root, { env });
    expect(await runCli(["--offline", "--resume", "--yes"], resumed.io)).toBe(0);
    expect(resumed.stdout()).not.toContain("? allow");
    expect(resumed.stdout()).toContain("The notes are saved in");
    expect(readFileSync(path.join(root, NOTES), "utf8")).toContain("tiny-repo");
  });
});

function mkdirSyncTemp(): string {
  const dir = path.join(tmpdir(), `xal-cli-sessions-trace-${process.pid}-${cleanups.length}`);
  mkdirSync(dir, { recursive: true });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

