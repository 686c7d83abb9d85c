/**
 * One process of the crash test: `run` starts the durable session and SIGKILLs itself at its kill
 * point; `resume` continues the session to its end. Either writes the run's messages to `out` when
 * it gets there. A subscriber logs every event it is given (sequence number, provisional, a compact
 * projection) to `<out>.events` as it starts on it, and `{ack}` once its (asynchronous) work on it
 * is done: a SIGKILL may land inside a listener.
 *
 *   tsx crash-child.ts run|resume|agent-run|agent-resume <dir> <out> <kill> [after]
 *
 * `kill`: `none`, `event:N` (inside the listener of the Nth event), `update:N` (inside the listener
 * of the Nth `message_update`: mid-response), `append:N` (right after this process's Nth record:
 * between a record and the delivery of its events), `response:N` (right before the Nth response's
 * record: between its last delta and its record), `ms:N` (after N ms of wall time).
 * `after`: `ack` resumes after the last event the first process's subscriber finished (exactly once);
 * `ack2` (a third process, after two crashes): after the last event finished by the first or, when it
 * finished any, the second (`mid.json`) process.
 * `agent-*`: the same session through an Agent (`durable` option, `agent.resume()`).
 * `CRASH_STREAMING=1`: the session with streaming tool execution (R70: calls start mid-response).
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentMessage, AnyAgentEvent } from "../../src/index.js";
import type { RunStore, SessionWriter } from "../../src/store/run-store.js";
import type { EventDelivery } from "../../src/durable/delivery.js";
import { runAgentLoop } from "../../src/index.js";
import { resumeAgentLoop } from "../../src/durable/resume.js";
import { openSqliteStore } from "../../src/sqlite.js";
import { crashAgent, crashSession, fixedClock, prompt } from "./crash-scenario.js";
import { project } from "./crash-projection.js";

const [mode, dir, out, killArg = "none", afterArg] = process.argv.slice(2);
const [killKind, killN] = killArg.split(":") as [string, string | undefined];
const killAt = Number(killN ?? -1);
const kill = () => process.kill(process.pid, "SIGKILL");
const log = `${out}.events`;

/** The store, its writers' appends counted (and a kill point placed among them). */
function openStore(): RunStore {
  const store = openSqliteStore(join(dir, "sessions.db"));
  let appends = 0;
  let responses = 0;
  const openSession = store.openSession.bind(store);
  store.openSession = (...args) => {
    const writer: SessionWriter = openSession(...args);
    const append = writer.append.bind(writer);
    writer.append = (record) => {
      if (killKind === "response" && (record as { k?: string }).k === "response" && ++responses === killAt) kill();
      const seq = append(record);
      if (killKind === "append" && ++appends === killAt) kill();
      return seq;
    };
    return writer;
  };
  return store;
}

const store = openStore();
const durable = { store, sessionId: "crash" };
const session = crashSession(join(dir, "executions.txt"), { requests: join(dir, "requests.txt"), streaming: process.env.CRASH_STREAMING === "1" });
let events = 0;
let updates = 0;
const listener = async (event: AnyAgentEvent, delivery?: EventDelivery) => {
  appendFileSync(log, `${JSON.stringify({ seq: delivery?.seq ?? null, provisional: delivery?.provisional ?? false, key: project(event) })}\n`);
  events++;
  if (event.type === "message_update") updates++;
  if ((killKind === "event" && events === killAt) || (killKind === "update" && event.type === "message_update" && updates === killAt)) kill();
  // Asynchronous work: later events queue behind it (a kill here leaves them undelivered).
  await new Promise<void>((resolve) => setImmediate(resolve));
  appendFileSync(log, `${JSON.stringify({ ack: delivery?.seq ?? null })}\n`);
};
if (killKind === "ms") setTimeout(kill, killAt);

/** The last sequence number the earlier processes' subscriber finished with, in process order (0: none). */
function acked(logs: string[]): number {
  let last = 0;
  for (const name of logs) {
    const file = join(dir, `${name}.events`);
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, "utf8").split("\n").filter(Boolean)) {
      const entry = JSON.parse(line) as { ack?: number | null };
      if (typeof entry.ack === "number") last = entry.ack;
    }
  }
  return last;
}
const after = afterArg === "ack" ? acked(["first.json"]) : afterArg === "ack2" ? acked(["first.json", "mid.json"]) : undefined;

async function play(mode: string): Promise<AgentMessage[]> {
  const config = { ...session.config, onRuntimeEvent: (event: AnyAgentEvent, delivery?: EventDelivery) => listener(event, delivery) };
  if (mode === "run") return runAgentLoop([prompt], { messages: [], tools: session.tools }, config, listener as never, undefined, session.streamFn, { durable, clock: fixedClock });
  if (mode === "resume") {
    return (await resumeAgentLoop(durable, { config, tools: session.tools, streamFn: session.streamFn, sink: listener, clock: fixedClock, ...(after !== undefined ? { after } : {}) })).messages;
  }
  const agent = crashAgent(session, durable);
  agent.subscribe((event, _signal, delivery) => listener(event, delivery), { runtimeEvents: true });
  if (mode === "agent-run") await agent.prompt(prompt);
  else await agent.resume(after !== undefined ? { after } : {});
  return agent.state.messages;
}
// A kill before the session's first record leaves nothing to resume: the new process starts it.
const fresh = (mode === "resume" || mode === "agent-resume") && !store.hasSession(durable.sessionId);
const messages = fresh ? (console.error("nothing stored yet: starting the session"), await play(mode === "resume" ? "run" : "agent-run")) : await play(mode);
writeFileSync(out, JSON.stringify({ messages, events }));
process.exit(0);
