/**
 * One process of the crash test: `run` starts the durable session and SIGKILLs itself when its
 * sink has received `killAt` events (or after `killAfterMs` of wall time); `resume` continues
 * the session to its end. Either writes the run's messages to `out` when it gets there.
 *
 *   tsx crash-child.ts run|resume|agent-run|agent-resume <dir> <out> [killAt] [killAfterMs]
 *
 * `agent-*`: the same session through an Agent (`durable` option, `agent.resume()`); `out` then
 * holds the Agent's transcript.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentMessage, AnyAgentEvent } from "../../src/index.js";
import type { RunStore } from "../../src/store/run-store.js";
import { runAgentLoop } from "../../src/index.js";
import { resumeAgentLoop } from "../../src/durable/resume.js";
import { openSqliteStore } from "../../src/sqlite.js";
import { crashAgent, crashSession, fixedClock, prompt } from "./crash-scenario.js";

// The one line to change for the SQLite store: `openSqliteStore(join(dir, "sessions.db"))`.
// The embedded SQLite store (WAL, synchronous=NORMAL): what survives a SIGKILL is what this test checks.
const openStore = (dir: string): RunStore => openSqliteStore(join(dir, "sessions.db"));

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

async function play(mode: string): Promise<AgentMessage[]> {
  if (mode === "run") return runAgentLoop([prompt], { messages: [], tools: session.tools }, session.config, sink, undefined, session.streamFn, { durable, clock: fixedClock });
  if (mode === "resume") return (await resumeAgentLoop(durable, { config: session.config, tools: session.tools, streamFn: session.streamFn, sink, clock: fixedClock })).messages;
  const agent = crashAgent(session, durable);
  agent.subscribe(sink);
  if (mode === "agent-run") await agent.prompt(prompt);
  else await agent.resume();
  return agent.state.messages;
}
// A kill before the session's first record leaves nothing to resume: the new process starts it.
const fresh = (mode === "resume" || mode === "agent-resume") && !store.hasSession(durable.sessionId);
const messages = fresh ? (console.error("nothing stored yet: starting the session"), await play(mode === "resume" ? "run" : "agent-run")) : await play(mode);
writeFileSync(out, JSON.stringify({ messages, delivered }));
process.exit(0);
