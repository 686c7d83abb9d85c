/**
 * `createTraceRecorder`: produces the trace format v1 (src/trace/FORMAT.md) as JSON Lines handed
 * to a `write` callback. Node-free: the CLI writes the lines to a file, a viewer or a test may keep
 * them in memory.
 *
 * - `recordEvent` records every `AgentEvent` (reduced: no `message_update` partials, no image data).
 * - `inspect` is an XState inspection observer (pass it as `RunOptions.inspect` or to the actor):
 *   it records the state value of the run machine (machine id `"run"`) and of each tool-call actor
 *   (machine id `"toolCall"`, actor id `"tool:<index>"`) after each transition, from the
 *   `@xstate.snapshot` inspection events; snapshots of a machine with id `"session"` are recorded
 *   as actor `"session"`. Other actors (invoked promises, …) are ignored.
 * - `note` records a free-form marker.
 *
 * Runs are counted from 1 in session order: events by their `agent_start` (unless `recordEvent`
 * is given the run), states by the run-machine actors as they appear. Both count the same runs
 * as long as runs do not overlap, which an `Agent` guarantees.
 */
import type { InspectionEvent } from "xstate";
import type { AgentEvent } from "../types.js";
import { redact } from "./json.js";
import { reduceEventForTrace } from "./reduce.js";
import { createEventJson } from "./event-json.js";
import { createStateJson, msJson, numberJson } from "./state-json.js";
import { TRACE_FORMAT, TRACE_VERSION, type TraceRecord, type TraceStateRecord } from "./format.js";

export interface TraceRecorderOptions {
  /** Receives each record as one JSON line, `\n`-terminated, in order. Must not throw. */
  write: (line: string) => void;
  /** A monotonic clock in ms (default `performance.now()`). */
  now?: () => number;
  /** Header fields. */
  model?: { id: string; provider: string };
  cwd?: string;
  /** Wall-clock start for the header (default: now). */
  createdAt?: Date;
  /** Values that must never appear in the trace (e.g. an API key); replaced by `[redacted]`. */
  secrets?: readonly string[];
}

export interface TraceRecorder {
  /** An XState inspection observer; records run-machine and tool-call snapshots. */
  inspect: (event: InspectionEvent) => void;
  /** Records one agent event; `run` defaults to the recorder's own count of `agent_start`s. */
  recordEvent: (event: AgentEvent, run?: number) => void;
  /** Records a free-form note for the current run. */
  note: (text: string) => void;
  /** The current run number (0 before the first run). */
  readonly run: number;
}

/** A record before the recorder stamps `seq` and `t`. */
type Unstamped = TraceRecord extends infer R ? (R extends TraceRecord ? Omit<R, "seq" | "t"> : never) : never;

const now = (): number => globalThis.performance.now();

/** An inspected actor (an `ActorRef`: inspection events type it by the fields every actor-like has). */
type Named = { id?: string; sessionId: string };

/** Tool-call actors are spawned as `tool:<index>` (machines/run.machine.ts). */
const isToolCallId = (id: string | undefined): boolean => id !== undefined && id.startsWith("tool:");

export function createTraceRecorder(options: TraceRecorderOptions): TraceRecorder {
  const clock = options.now ?? now;
  const secrets = options.secrets ?? [];
  const t0 = clock();
  let seq = 0;
  let eventRun = 0;
  let stateRun = 0;
  const runActors = new Map<string, number>();
  /** Each live tool-call actor's parent (its run), by session id: from the `xstate.init` event that starts it. */
  const callParents = new Map<string, string>();

  const stamp = () => {
    // The header is the origin of the clock; times are kept to the microsecond.
    const us = seq === 0 ? 0 : Math.round((clock() - t0) * 1000);
    return { seq: seq++, t: us / 1000, tJson: msJson(us) };
  };
  const emit = (record: Unstamped) => {
    const { seq, t } = stamp();
    const { type, ...fields } = record;
    const line = JSON.stringify({ type, seq, t, ...fields });
    options.write(`${redact(line, secrets)}\n`);
  };
  const eventJson = createEventJson(secrets);
  const stateJson = createStateJson(secrets);

  emit({
    type: "trace",
    version: TRACE_VERSION,
    format: TRACE_FORMAT,
    createdAt: (options.createdAt ?? new Date()).toISOString(),
    model: options.model ? { id: options.model.id, provider: options.model.provider } : null,
    cwd: options.cwd ?? null,
  });

  const currentRun = () => Math.max(eventRun, stateRun);

  const inspect = (inspection: InspectionEvent) => {
    if (inspection.type === "@xstate.event") {
      // XState reports who started an actor with its `xstate.init` event (`sourceRef`): a tool
      // call's parent is the run that spawned it.
      const { sourceRef } = inspection;
      const actorRef = inspection.actorRef as Named;
      if (sourceRef && inspection.event.type === "xstate.init" && isToolCallId(actorRef.id)) callParents.set(actorRef.sessionId, sourceRef.sessionId);
      return;
    }
    if (inspection.type !== "@xstate.snapshot") return;
    const snapshot = inspection.snapshot as {
      machine?: { id?: string };
      value?: unknown;
      status?: TraceStateRecord["status"];
    };
    const machineId = snapshot.machine?.id;
    const actorRef = inspection.actorRef as Named;
    let actor: string;
    let run: number;
    if (machineId === "run") {
      actor = "run";
      let known = runActors.get(actorRef.sessionId);
      if (known === undefined) {
        known = ++stateRun;
        runActors.set(actorRef.sessionId, known);
      }
      run = known;
    } else if (machineId === "toolCall") {
      actor = actorRef.id ?? "tool";
      const parent = callParents.get(actorRef.sessionId);
      run = (parent !== undefined ? runActors.get(parent) : undefined) ?? stateRun;
      if (snapshot.status !== undefined && snapshot.status !== "active") callParents.delete(actorRef.sessionId);
    } else if (machineId === "session") {
      actor = "session";
      run = currentRun();
    } else return;
    // What `emit` writes for this record, without building it first (51 of them per five turns).
    const { seq, tJson } = stamp();
    const status = snapshot.status ?? "active";
    options.write(`${stateJson({ seq, tJson, run, actor, value: snapshot.value, status, cause: String(inspection.event?.type ?? "") })}\n`);
  };

  const recordEvent = (event: AgentEvent, run?: number) => {
    if (run !== undefined) eventRun = run;
    else if (event.type === "agent_start") eventRun++;
    const recordRun = run ?? Math.max(eventRun, 1);
    // The same line as `emit` would write, its messages' JSON reused (event-json.ts).
    const json = eventJson(event);
    if (json === undefined) emit({ type: "event", run: recordRun, event: reduceEventForTrace(event) });
    else {
      const { seq, tJson } = stamp();
      options.write(`{"type":"event","seq":${seq},"t":${tJson},"run":${numberJson(recordRun)},"event":${json}}\n`);
    }
  };

  const note = (text: string) => emit({ type: "note", run: currentRun(), text });

  return {
    inspect,
    recordEvent,
    note,
    get run() {
      return currentRun();
    },
  };
}
