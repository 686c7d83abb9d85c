/**
 * Deterministic replay (SPEC R83): `replayRun(records)` runs the run machine again offline from a
 * journal. No app code runs: every step is answered from the journal, strictly in journal order
 * (so parallel completions come back in the order they happened), tools are stand-ins that are
 * never called, and the clock reads the journaled time (every reading the run made travels in a
 * reply; R67's abandonment is a record with its time) and fires no timer. The
 * events come out as they were delivered, byte for byte (each is copied as JSON at delivery).
 */
import { createActor, type InspectionEvent } from "xstate";
import type { AgentMessage, AgentTool, AnyAgentEvent, StreamFn } from "../types.js";
import type { RunInput } from "../../machines/run.types.js";
import type { Clock } from "../loop/clock.js";
import type { StoredRecord } from "../store/run-store.js";
import { createRunRuntime, type RunRuntime } from "../actors/run-runtime.js";
import { provideRunMachine } from "../actors/implementations.js";
import { bindJobJournal } from "../actors/steps-worker.js";
import { RunJournal } from "./run-journal.js";
import { DeliveryLedger } from "./delivery.js";
import { numberEvents } from "./durable-run.js";
import { JOURNAL_FORMAT, isJournalRecord, jsonCopy, type JournalRecord, type RunRecord } from "./records.js";
import { JournalFormatError } from "./errors.js";

export interface ReplayedRun {
  /** Every AgentEvent and runtime event (R66) the run delivered, in order, as JSON data. */
  events: AnyAgentEvent[];
  /** The messages the run added (R12), when the journal holds its end; undefined for a run cut short (a crash). */
  messages: AgentMessage[] | undefined;
  /** R81: the sequence number of the run's first event in its session (`events[i]` has `firstSeq + i`). */
  firstSeq: number;
  /** R81: whether each event was delivered provisional (`provisional[i]` is `events[i]`'s flag, as first delivered). */
  provisional: boolean[];
}

export interface ReplayOptions {
  /** An XState inspection observer for the replayed run actors (the trace export records their states with it). */
  inspect?: (event: InspectionEvent) => void;
  /** Told the journaled time (the last reply's `at`) whenever a record is delivered. */
  onTime?: (at: number) => void;
  /** Gets each event as it is replayed (before it is copied into the result). */
  onEvent?: (event: AnyAgentEvent) => void;
}

/** Replays every run in `records` (a session's journal, as stored or as plain records), in order. */
export async function replayRun(records: readonly (StoredRecord | unknown)[], options: ReplayOptions = {}): Promise<ReplayedRun[]> {
  const plain = records.map((entry) => (isStored(entry) ? entry.record : entry)).filter(isJournalRecord);
  const runs: ReplayedRun[] = [];
  for (let i = 0; i < plain.length; i++) {
    if (plain[i].k !== "run") continue;
    let end = i + 1;
    while (end < plain.length && plain[end].k !== "run") end++;
    runs.push(await replayOne(plain[i] as RunRecord, plain.slice(i + 1, end), options));
  }
  return runs;
}

/** The AgentEvents of every run in `records`, concatenated (what a consumer of the session saw). */
export async function replayEvents(records: readonly (StoredRecord | unknown)[]): Promise<AnyAgentEvent[]> {
  return (await replayRun(records)).flatMap((run) => run.events);
}

const isStored = (entry: unknown): entry is StoredRecord =>
  typeof entry === "object" && entry !== null && typeof (entry as StoredRecord).seq === "number" && "record" in entry;

const offline: StreamFn = () => {
  throw new Error("replay: the stream function is never called (every response comes from the journal)");
};

/** A tool by the journaled declaration, never executed (R83: no app code). */
function standIn(decl: { name: string; description: string; parameters: unknown }): AgentTool {
  return {
    ...decl,
    label: decl.name,
    parameters: decl.parameters as never,
    execute: () => {
      throw new Error("replay: tools are never executed (every outcome comes from the journal)");
    },
  };
}

/** A clock that reads the journaled time (the last reply's) and whose timers never fire (R67's grace is a record). */
const journalClock = (time: { at: number }): Clock => ({ now: () => time.at, monotonic: () => time.at, setTimer: () => () => {} });

async function replayOne(run: RunRecord, records: JournalRecord[], options: ReplayOptions): Promise<ReplayedRun> {
  if (run.v > JOURNAL_FORMAT) throw new JournalFormatError(`format ${run.v}, this build reads up to ${JOURNAL_FORMAT}`);
  const input = run.input as RunInput;
  const events: AnyAgentEvent[] = [];
  const provisional: boolean[] = [];
  const collect = (event: AnyAgentEvent) => {
    options.onEvent?.(event);
    events.push(jsonCopy(event));
    provisional.push(ledger.current().provisional);
  };
  const journal = new RunJournal(undefined, records, "replay");
  const base = run.e ?? 0;
  const ledger = new DeliveryLedger(base, base + 1);
  const time = { at: input.startedAt };
  journal.hooks.onTime = (at) => {
    time.at = at;
    options.onTime?.(at);
  };
  let failure: Error | undefined;
  journal.hooks.onFailure = (error) => void (failure = error);
  const tools = (input.tools ?? []).map((tool) => standIn(tool.decl as never));
  let runtime: RunRuntime | undefined;
  // One run per replay: its worker's runtime is this one.
  const logic = provideRunMachine({
    runtimeOf: () => {
      if (!runtime) throw new Error("replay: the run's runtime is bound before it starts");
      return runtime;
    },
  });
  options.onTime?.(input.startedAt);
  const actor = createActor(logic, { input, ...(options.inspect ? { inspect: options.inspect } : {}) });
  runtime = createRunRuntime({
    owner: actor,
    config: { onRuntimeEvent: collect, ...run.settings } as never,
    streamFn: offline,
    tools,
    clock: journalClock(time),
    sink: collect,
    onSinkFailure: () => {},
  });
  journal.attach(runtime, actor);
  bindJobJournal(runtime, journal);
  // R81: numbered as the run was (a journaled retraction is replayed at its sequence number).
  numberEvents(runtime, journal, ledger);
  let messages: AgentMessage[] | undefined;
  const finished = new Promise<void>((resolve) => actor.subscribe({ complete: () => resolve(), error: () => resolve() }));
  actor.start();
  journal.started();
  // Everything a replay does is promise jobs (no timer, no I/O): once a macrotask passes with
  // the run still waiting, the journal has nothing more for it.
  for (;;) {
    const settled = await Promise.race([finished.then(() => true), macrotask().then(() => false)]);
    if (settled || failure) break;
    if (!journal.progressed()) break;
  }
  if (failure) {
    actor.stop();
    throw failure;
  }
  const snapshot = actor.getSnapshot();
  if (snapshot.status === "done") messages = snapshot.output as AgentMessage[];
  else actor.stop();
  return { events, messages, firstSeq: base + 1, provisional };
}

const macrotask = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
