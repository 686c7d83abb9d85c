/**
 * Resume after a crash (SPEC R81): `resumeAgentLoop(durable, options)` continues the session's
 * unfinished run from its journal. The run is made again from its journaled input (the snapshot
 * of its start); each step it asks for is answered from the journal, in journal order, with the
 * events the journal holds going nowhere (they were delivered before the crash: a consumer reads
 * the past with `replayRun`). When the records run out the run is live: steps in flight at the
 * crash run again (a model request is made again, `message_start` included; a tool `execute`
 * whose intent has no outcome follows R13's rule: `replay: "safe"` re-runs, otherwise the result
 * `Tool NAME was interrupted before it finished; …`), and from then on the sink gets every event.
 * Nothing that completed runs again.
 */
import type { AgentEvent, AgentEventSink, AgentLoopConfig, AgentMessage, AgentTool, StreamFn } from "../types.js";
import type { EventDelivery } from "./delivery.js";
import type { RunInput } from "../../machines/run.types.js";
import { startRun, type RunOptions } from "../api/start-run.js";
import { resolveStreamFn } from "../api/default-stream-fn.js";
import { checkDurable, resumedRun, type DurableOptions, type LiveAt, type UnfinishedRun } from "./durable-run.js";
import { JOURNAL_FORMAT, isJournalRecord, type JournalRecord, type RunRecord } from "./records.js";
import type { StoredRecord } from "../store/run-store.js";
import { JournalFormatError } from "./errors.js";

export interface ResumeOptions {
  /** The run's config, as it was given to the interrupted run (hooks are app code: given again). */
  config: AgentLoopConfig;
  /** The executable tools: every tool the journaled run names must be here (else a `RestoreError`). */
  tools?: AgentTool[];
  streamFn?: StreamFn;
  /**
   * Gets the events from where delivery resumes (R81): after `after`, else from the first event
   * whose delivery is not known to have completed; each with its `EventDelivery` as second argument.
   */
  sink: (event: AgentEvent, delivery?: EventDelivery) => void | Promise<void>;
  /**
   * R81: the consumer's last processed sequence number: every later event of the run is delivered
   * exactly once, in order (a consumer that needs exactly-once passes it). Without it delivery is at
   * least once, from the first event the journal does not know was delivered.
   */
  after?: number | "journal";
  /** Called once, when the run has replayed its journal and goes live (or as it ends within it), as `Agent.resume`'s. */
  onLive?: (live: LiveAt) => void;
  signal?: AbortSignal;
  clock?: RunOptions["clock"];
  random?: RunOptions["random"];
  inspect?: RunOptions["inspect"];
}

export interface ResumeResult {
  /** False when the session had no unfinished run (nothing ran): its last run ended and its quiet point was saved. */
  resumed: boolean;
  /** The messages the whole run added (R12), those from before the crash included. */
  messages: AgentMessage[];
}

/** Continues the session's unfinished run (R81); takes the session's lock while it runs (R84: `SessionLockedError` if another writer holds it). */
export async function resumeAgentLoop(durable: DurableOptions, options: ResumeOptions): Promise<ResumeResult> {
  checkDurable(durable, "durable");
  const writer = durable.store.openSession(durable.sessionId, { create: false });
  let unfinished: UnfinishedRun | undefined;
  try {
    unfinished = unfinishedRun(writer.records(writer.snapshot()?.atSeq ?? 0));
  } catch (error) {
    writer.release();
    throw error;
  }
  if (!unfinished) {
    writer.release();
    return { resumed: false, messages: [] };
  }
  const journaled = resumedRun(writer, unfinished, { after: options.after, onLive: options.onLive });
  const onRuntimeEvent = options.config.onRuntimeEvent;
  const config: AgentLoopConfig = { ...options.config, ...(onRuntimeEvent ? { onRuntimeEvent: journaled.sinkOf(onRuntimeEvent) } : {}) };
  const messages = await startRun({
    prompts: null,
    context: { messages: [], tools: options.tools ?? [] },
    config,
    sink: options.sink as AgentEventSink,
    signal: options.signal,
    streamFn: resolveStreamFn(options.streamFn),
    options: { clock: options.clock, random: options.random, inspect: options.inspect },
    resumed: { input: unfinished.run.input as RunInput, run: journaled },
  });
  return { resumed: true, messages };
}

/**
 * The last run of `stored` (the records after the session's quiet point) and the records after its
 * start: one with no `end` record, or one whose `end` no quiet point followed (R84: the process
 * stopped between the two, and the run's messages must still reach the transcript). Its journal
 * then answers every step and takes that `end` as its own (`RunJournal.end`): nothing runs again.
 */
export function unfinishedRun(stored: readonly StoredRecord[]): UnfinishedRun | undefined {
  const records: JournalRecord[] = [];
  for (const entry of stored) if (isJournalRecord(entry.record)) records.push(entry.record);
  let start = -1;
  for (let i = records.length - 1; i >= 0; i--) {
    if (records[i].k === "run") {
      start = i;
      break;
    }
  }
  if (start < 0) return undefined;
  const run = records[start] as RunRecord;
  if (run.v > JOURNAL_FORMAT) throw new JournalFormatError(`format ${run.v}, this build reads up to ${JOURNAL_FORMAT}`);
  return { run, after: records.slice(start + 1), throughSeq: stored[stored.length - 1].seq };
}
