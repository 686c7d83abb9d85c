/**
 * One process of the crash test: `run` starts the durable session and SIGKILLs itself when its
 * sink has received `killAt` events (or after `killAfterMs` of wall time); `resume` continues
 * the session to its end. Either writes the run's messages to `out` when it gets there.
 *
 *   tsx crash-child.ts run|resume <dir> <out> [killAt] [killAfterMs]
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AnyAgentEvent } from "../../src/index.js";
import type { RunStore } from "../../src/store/run-store.js";
import { runAgentLoop } from "../../src/index.js";
import { resumeAgentLoop } from "../../src/durable/resume.js";
import { fileRunStore } from "../support/file-run-store.js";
import { crashSession, fixedClock, prompt } from "./crash-scenario.js";

// The one line to change for the SQLite store: `openSqliteStore(join(dir, "sessions.db"))`.
const openStore = (dir: string): RunStore => fileRunStore(join(dir, "store"));

const [mode, dir, out, killAtArg, killAfterArg] = process.argv.slice(2);
const killAt = Number(killAtArg ?? -1);
const killAfterMs = Number(killAfterArg ?? -1);
const store = openStore(dir);
const durable = { store, sessionId: "crash" };
const session = crashSession(join(dir, "executions.txt"));
let delivered = 0;
const kill = () => process.kill(process.pid, "SIGKILL");
const sink = (_event: AnyAgentEvent) => {
  delivered++;
  if (delivered === killAt) kill();
};
if (killAfterMs >= 0) setTimeout(kill, killAfterMs);

const messages =
  mode === "run"
    ? await runAgentLoop([prompt], { messages: [], tools: session.tools }, session.config, sink, undefined, session.streamFn, { durable, clock: fixedClock })
    : (await resumeAgentLoop(durable, { config: session.config, tools: session.tools, streamFn: session.streamFn, sink, clock: fixedClock })).messages;
writeFileSync(out, JSON.stringify({ messages, delivered }));
process.exit(0);
