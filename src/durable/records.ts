/**
 * The run journal's records (SPEC R80): plain JSON, one per store append, in the order things
 * happened. A record never holds a function, a key or a class instance; errors are serialized.
 *
 * - `run`: a run starts: the run machine's plain-data input (what it would be created with), and
 *   the two settings the step worker reads outside the machine.
 * - `job`: a step's job replied: who asked (`path`: "run" or the tool call's actor id), which job,
 *   a digest of its input (a replay checks it), what the job emitted and sent before its reply
 *   (`out`, in order; one record per response for a stream, R80), and the reply itself.
 * - `out`: what a job emitted before another record came between (parallel jobs, an abort), or
 *   before it was cancelled; its reply, if any, is a later `job` record.
 * - `response`: a response's events through its `message_end`, written before that is delivered
 *   (R81's write-ahead); its reply is a later `job` record.
 * - `intent`: a tool's `execute` is about to run (R80); its `job` record is the outcome.
 * - `input`: an external input: `abort` (the run's signal), `grace` (R67's abort grace ran
 *   out at `at`: the worker abandoned the jobs still running), or `retract` (R81: a resumed run
 *   retracted the crashed process's provisional events).
 * - `end`: the run ended; `messages` are the ones it added (R12).
 * - `queue`: a durable Agent's queue changed (R80's queue arrivals): a message steered or queued as
 *   a follow-up, or a queue cleared, where the Agent took it, inside a run or between runs. No run
 *   replays it (a run takes queued messages through its polls, whose replies are `job` records);
 *   a resumed Agent rebuilds its queues from them (queue-records.ts).
 */
import type { EventObject } from "xstate";
import type { Json } from "../store/run-store.js";
import type { AnyAgentEvent, AgentMessage } from "../types.js";
import { doneType, type RunApprovalEvent, type StepName, type StepReply } from "../../machines/steps.js";
import type { RunInput } from "../../machines/run.types.js";
import { applyDelta, delta, type DeltaNode } from "./update-delta.js";

/**
 * The journal format's version, in every `run` record. 2: a job's output may span several records
 * (its deltas chained across them), and a retraction takes the next sequence number (`retract`
 * records carry `seq`). 3: a steering poll's reply may say that the Agent's follow-up queue was
 * empty (`{ messages, followUps: "none" }`, R10: the run then skips the follow-up poll, and a replay
 * takes the same path); a build that reads only format 2 would take that object for messages, so
 * it refuses the journal instead. Formats 1 and 2 are read too (their polls' replies are arrays:
 * the run polls follow-ups as it did when it wrote them). 4: an Agent's run may defer its initial
 * steering poll to its first job (R3, the run's input says so), whose reply may then be that
 * steering was queued before it began (`{ ok: true, steeringQueued: true }`: the job did not run),
 * and a steering poll that took nothing may say the queue was still empty where R4a's re-poll would
 * drain (`steering: "none"`: the run skips that re-poll); a build that reads only format 3 would take
 * the first for the job's output and re-poll where the journal has no poll, so it refuses the
 * journal. The runs of formats 1 to 3 defer nothing and their replies never say `steering`: they
 * poll as they did.
 */
export const JOURNAL_FORMAT = 4;

/**
 * What a job emitted (an AgentEvent) or sent to its requester mid-job (`{ sent }`), in order. In a
 * record, a stream update after the first of its kind is `{ delta, of: kind }` (update-delta.ts).
 */
export type JobOutput = AnyAgentEvent | { sent: EventObject } | { delta: DeltaNode; of: string };

/** The event kinds stored as deltas: each carries a growing partial result. */
const DELTA_KINDS = new Set(["message_update", "tool_execution_update"]);

/** `item` as stored: a stream update after the first of its kind in the record as its difference from the one before. */
export function encodeUpdate(item: JobOutput, previous: Map<string, Json>): JobOutput {
  const type = (item as { type?: unknown }).type;
  if (typeof type !== "string" || !DELTA_KINDS.has(type)) return item;
  const before = previous.get(type);
  previous.set(type, item as unknown as Json);
  return before === undefined ? item : { delta: delta(before, item as unknown as Json), of: type };
}

/**
 * A record's `out` with every delta rebuilt into its event. `previous`: the job's last update of
 * each kind from its earlier records (a job's output may span several, R81), updated in place.
 */
export function decodeOut(out: readonly JobOutput[], previous = new Map<string, Json>()): (AnyAgentEvent | { sent: EventObject })[] {
  return out.map((item) => {
    const event = "delta" in item ? (applyDelta(previous.get(item.of)!, item.delta) as unknown as AnyAgentEvent) : item;
    const type = (event as { type?: unknown }).type;
    if (typeof type === "string" && DELTA_KINDS.has(type)) previous.set(type, event as unknown as Json);
    return event;
  });
}


export type SerializedError =
  | { kind: "error"; name: string; message: string; props?: { [key: string]: Json } }
  | { kind: "value"; value: Json };

export type SerializedReply =
  /** `steeringQueued` (format 4, R3): steering was queued before the job began; it did not run (`step.steeringQueued`, no output). */
  { ok: true; output?: Json; steeringQueued?: true; at: number } | { ok: false; error: SerializedError; at: number };

export interface RunRecord {
  k: "run";
  v: number;
  input: RunInput;
  settings: { abortGraceMs?: number };
  /** R81: the session's event count before this run (its first event's sequence number is `e + 1`); absent: 0. */
  e?: number;
}
export interface JobRecord {
  k: "job";
  path: string;
  job: StepName;
  digest: string;
  out?: JobOutput[];
  reply: SerializedReply;
  /** R81: the last sequence number whose delivery had completed when the record was appended. */
  d?: number;
}
export interface OutRecord {
  k: "out";
  path: string;
  job: StepName;
  digest: string;
  out: JobOutput[];
  d?: number;
}
/**
 * R81's write-ahead for a response: a `streamResponse` job's events through its `message_end`,
 * appended before that `message_end` is delivered (`at`: the clock then). Its `job` record (the
 * reply, no `out`) follows; a journal that ends between the two answers the job from this record.
 */
export interface ResponseRecord {
  k: "response";
  path: string;
  job: "streamResponse";
  digest: string;
  out: JobOutput[];
  at: number;
  d?: number;
}
export interface IntentRecord {
  k: "intent";
  path: string;
  job: "executeToolCall";
  digest: string;
  toolCallId: string;
  toolName: string;
}
/** R82: an approval decision the run took (the event as the run got it, plain data). */
export type DecisionEvent = RunApprovalEvent;
/**
 * `retract` (R81): a resumed run retracts what the crashed process delivered of a response that
 * did not end, before its steps in flight run again. The retracted events keep their numbers (they
 * are in the journal's `out` records); the retraction takes the next one (`seq`, checked by a
 * replay) and points back at the first retracted event (`fromSeq`). Format 1 had no `seq`, and
 * without `fromSeq` a retraction retracted from its own number.
 */
export type InputRecord =
  | { k: "input"; input: "abort" }
  | { k: "input"; input: "grace"; at: number }
  | { k: "input"; input: "decision"; event: DecisionEvent }
  | { k: "input"; input: "retract"; fromSeq?: number; seq?: number };
export interface EndRecord {
  k: "end";
  messages: AgentMessage[];
  /** R81: the session's event count at the run's end (the next run's `e`). */
  e?: number;
  d?: number;
}

/** R80: a durable Agent's queue arrival or clear (`queue`: "steering" or "followUp"). */
export type QueueRecord =
  | { k: "queue"; op: "push"; queue: "steering" | "followUp"; message: AgentMessage }
  | { k: "queue"; op: "clear"; queue: "steering" | "followUp" | "all" };

export type JournalRecord = RunRecord | JobRecord | OutRecord | ResponseRecord | IntentRecord | InputRecord | EndRecord | QueueRecord;

/** A record as the store takes it (its types are plain JSON by construction). */
export const asJson = (record: JournalRecord): Json => record as unknown as Json;

/** A copy of `value` as JSON data, as it is now (events are recorded as they were emitted). */
export const jsonCopy = <T>(value: T): T => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T));

export function serializeError(error: unknown): SerializedError {
  if (error instanceof Error) {
    const props: { [key: string]: Json } = {};
    for (const key of Object.keys(error)) {
      if (key === "name" || key === "message") continue;
      try {
        props[key] = jsonCopy((error as unknown as Record<string, unknown>)[key]) as Json;
      } catch {
        props[key] = "[unserializable]";
      }
    }
    return { kind: "error", name: error.name, message: error.message, ...(Object.keys(props).length > 0 ? { props } : {}) };
  }
  try {
    return { kind: "value", value: (jsonCopy(error) ?? null) as Json };
  } catch {
    return { kind: "value", value: String(error) };
  }
}

/** The error a serialized one stands for: an `Error` with its name, message and own fields again. */
export function reviveError(serialized: SerializedError): unknown {
  if (serialized.kind === "value") return serialized.value;
  const error = new Error(serialized.message);
  Object.defineProperty(error, "name", { value: serialized.name, configurable: true, writable: true });
  if (serialized.props) Object.assign(error, serialized.props);
  return error;
}

export function serializeReply(reply: StepReply): SerializedReply {
  if (reply.type === "step.failed") return { ok: false, error: serializeError(reply.error), at: reply.at };
  if (reply.type === "step.steeringQueued") return { ok: true, steeringQueued: true, at: reply.at };
  const output = jsonCopy(reply.output) as Json | undefined;
  return output === undefined ? { ok: true, at: reply.at } : { ok: true, output, at: reply.at };
}

export function reviveReply(job: StepName, reply: SerializedReply): StepReply {
  if (!reply.ok) return { type: "step.failed", job, error: reviveError(reply.error), at: reply.at };
  if (reply.steeringQueued) return { type: "step.steeringQueued", at: reply.at };
  return { type: doneType(job), output: reply.output, at: reply.at } as StepReply;
}

/**
 * A digest of a job's input (FNV-1a over its JSON, 32 bits, hex): a replayed run that asks for
 * a different input than the journal holds has diverged (different code or options).
 */
export function digestOf(input: unknown): string {
  const text = JSON.stringify(input) ?? "undefined";
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, "0");
}

const KINDS = new Set(["run", "job", "out", "response", "intent", "input", "end", "queue"]);

/** Is `value` one of this format's records? (A store may hold records of other writers: never.) */
export function isJournalRecord(value: unknown): value is JournalRecord {
  return typeof value === "object" && value !== null && KINDS.has((value as { k?: unknown }).k as string);
}
