import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { EventEmitter } from "node:events";
import { Readable } from "node:stream";
import { afterAll } from "vitest";
import type { CliIO } from "../../src/node/cli/app.js";

export const REPO = path.resolve(import.meta.dirname, "../..");
export const MAIN = path.join(REPO, "src/node/cli/main.ts");
export const TSX = path.join(REPO, "node_modules/tsx/dist/cli.mjs");

/** A small repository for the offline demo to explore. */
export function makeRepo(files: Record<string, string> = DEFAULT_FILES): { root: string; cleanup: () => void } {
  const root = mkdtempSync(path.join(tmpdir(), "xal-cli-"));
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), content);
  }
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

export const DEFAULT_FILES: Record<string, string> = {
  "package.json": JSON.stringify({ name: "tiny-repo", version: "2.0.0", description: "A tiny repository", scripts: { test: "vitest" } }, null, 2) + "\n",
  "README.md": "# Tiny\n\nA tiny repository.\n",
  "src/main.ts": "export function main() {\n  // TODO: parse arguments\n  return 0;\n}\n",
  "src/util.ts": "// TODO: remove\n// FIXME: slow\nexport const slow = true;\n",
  "test/main.test.ts": "import { main } from '../src/main';\n",
  "test/util.test.ts": "import { slow } from '../src/util';\n",
};

/**
 * Where the CLI keeps sessions in tests (`XDG_STATE_HOME`): a temporary directory of this test
 * process, never the real ~/.local/state.
 */
export const STATE_HOME = path.join(tmpdir(), `xal-cli-state-${process.pid}`);
// Removed after each test file that imports this fixture (the CLI creates it again when needed).
afterAll(() => rmSync(STATE_HOME, { recursive: true, force: true }));

/** In-process IO: a non-TTY stdin with `input`, captured stdout/stderr, no ANSI. */
export function fakeIO(cwd: string, options: { env?: Record<string, string>; input?: string } = {}) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const stdin = Readable.from(options.input === undefined ? [] : [options.input]) as unknown as CliIO["stdin"];
  const io: CliIO = {
    stdin,
    stdout: { write: (text: string) => stdout.push(text), isTTY: false },
    stderr: { write: (text: string) => stderr.push(text) },
    env: { XDG_STATE_HOME: STATE_HOME, ...options.env },
    cwd,
    demoPace: 0,
  };
  return { io, stdout: () => stdout.join(""), stderr: () => stderr.join("") };
}

export interface ParsedTrace {
  records: Record<string, any>[];
  events: Record<string, any>[];
  states: Record<string, any>[];
  notes: Record<string, any>[];
}

/** Parses a trace and checks the invariants of src/trace/FORMAT.md; throws on a violation. */
export function checkTrace(text: string): ParsedTrace {
  if (!text.endsWith("\n")) throw new Error("the trace does not end with a newline");
  const records = text.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, any>);
  const header = records[0];
  if (header.type !== "trace" || header.version !== 1 || header.format !== "xstate-agent-loop/trace") throw new Error("bad header");
  records.forEach((record, index) => {
    if (record.seq !== index) throw new Error(`seq ${record.seq} at line ${index}`);
    if (typeof record.t !== "number" || (index > 0 && record.t < records[index - 1].t)) throw new Error(`t goes back at ${index}`);
  });
  const events = records.filter((record) => record.type === "event");
  const runs = [...new Set(events.map((record) => record.run))];
  for (const run of runs) {
    const ofRun = events.filter((record) => record.run === run);
    if (ofRun[0].event.type !== "agent_start") throw new Error(`run ${run} starts with ${ofRun[0].event.type}`);
    if (ofRun.at(-1)!.event.type !== "agent_end") throw new Error(`run ${run} ends with ${ofRun.at(-1)!.event.type}`);
  }
  for (const record of events) {
    if (record.event.type === "message_update") {
      if (record.event.message?.partial !== true || "partial" in record.event.assistantMessageEvent) throw new Error("message_update not reduced");
    }
  }
  return {
    records,
    events,
    states: records.filter((record) => record.type === "state"),
    notes: records.filter((record) => record.type === "note"),
  };
}

/**
 * In-process IO with a fake terminal on stdin (raw mode, keypresses from `type`) and an ANSI
 * terminal on stdout. `ready` resolves once the CLI listens for keys.
 */
export function ttyIO(cwd: string, options: { env?: Record<string, string>; columns?: number; inspector?: CliIO["inspector"] } = {}) {
  const stdin = Object.assign(new EventEmitter(), {
    isTTY: true,
    setRawMode: () => stdin,
    resume: () => stdin,
    pause: () => stdin,
  });
  const ready = new Promise<void>((resolve) => {
    const onListener = (event: string) => {
      if (event !== "data") return;
      stdin.off("newListener", onListener);
      resolve();
    };
    stdin.on("newListener", onListener);
  });
  const out: string[] = [];
  const io: CliIO = {
    stdin: stdin as unknown as CliIO["stdin"],
    stdout: { write: (text: string) => out.push(text), isTTY: true, columns: options.columns ?? 80, rows: 30 },
    stderr: { write: (text: string) => out.push(text) },
    env: { TERM: "xterm-256color", XDG_STATE_HOME: STATE_HOME, ...options.env },
    cwd,
    demoPace: 0,
    ...(options.inspector ? { inspector: options.inspector } : {}),
  };
  return {
    io,
    ready,
    /** Delivers `text` as one chunk of terminal input (as a terminal sends a paste). */
    type: (text: string) => stdin.emit("data", Buffer.from(text, "utf8")),
    output: () => out.join(""),
    /** Forgets the output so far (keeps memory flat in timing loops). */
    clearOutput: () => void (out.length = 0),
  };
}
