/**
 * Random agent-loop scenarios for the property suite, and the runner that plays one through the
 * real runtime (`runAgentLoop` with the scripted model) while recording what the invariants need.
 * A scenario is plain data, so fast-check prints the shrunk counterexample as it is.
 */
import fc from "fast-check";
import type {
  AfterToolCallResult,
  AnyAgentEvent,
  AgentLoopConfig,
  AgentMessage,
  AgentTool,
  AgentToolResult,
  AssistantMessage,
  Clock,
  Compactor,
  RunActor,
  ScriptedBlock,
  ScriptedResponse,
  ScriptedStreamFn,
  TransientFailureKind,
} from "../../src/index.js";
import { createActor, toPromise, type InspectionEvent } from "xstate";
import { agentEvents, createAgentRunLogic, runAgentLoop, scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/index.js";

export type Outcome = "success" | "throw" | "isError" | "terminate";

export interface CallSpec {
  /** `seq` forces a sequential batch (R20); `missing` is not registered. */
  tool: "alpha" | "beta" | "seq" | "missing";
  outcome: Outcome;
  /** Milliseconds `execute` takes (abortable). */
  delay: number;
  /** `onUpdate` calls before the outcome. */
  updates: number;
  /** One more `onUpdate` after `execute` settled (must be dropped, R22). */
  lateUpdate: boolean;
  /** What `beforeToolCall` decides for this call, when configured. */
  before: "allow" | "block" | "blockTerminate" | "throw";
  /** What `afterToolCall` returns for this call, when configured. */
  after: "none" | "overrideContent" | "flipError" | "terminate" | "throw";
  /** The model sent arguments that fail validation. */
  badArgs: boolean;
  /** The tool's `prepareArguments` throws (alpha and seq have one; beta has none). */
  prepareThrows: boolean;
}

/**
 * What one request for a response gets before the response itself (R60–R62): a transient failure
 * (before content, or after it: never retried), an overflow, or a truncated answer without calls.
 * The n-th request for a response plays its n-th attempt; once they are used up, the response.
 */
export type Attempt =
  | { kind: "transient"; failure: TransientFailureKind; retryAfterMs: number | null; afterContent: boolean }
  | { kind: "overflow" }
  | { kind: "truncated" };

/** The loop's recovery settings (R60–R62), each randomly on; null = all off. */
export interface RecoverySpec {
  retry: { maxAttempts: number; baseDelayMs: number; maxDelayMs: number } | null;
  /** `escalate: false` asks for the model's maximum already (`maxTokens`), so nothing escalates. */
  outputLimit: { escalate: boolean; maxRecoveries: number } | null;
  /** With the scenario's deterministic compactor; `thresholdTokens` for proactive compaction. */
  compact: { thresholdTokens: number | null } | null;
  /** Every draw of the random source (the backoff's jitter). */
  jitter: number;
}

export interface ResponseSpec {
  /** Attempts played before the response (see Attempt). */
  prelude: Attempt[];
  calls: CallSpec[];
  stop: "natural" | "length" | "error" | "aborted";
  /** Per-event delay of the scripted stream, ms. */
  delayMs: number;
  thinking: boolean;
}

export type HookThrow = "none" | "finishTurn" | "prepareNextTurn" | "getSteeringMessages" | "getFollowUpMessages" | "prepareRequest" | "transformContext";

export interface Scenario {
  responses: ResponseSpec[];
  toolExecution: "parallel" | "sequential";
  beforeToolCall: boolean;
  afterToolCall: boolean;
  /** `finishTurn` decisions per turn (then none); null = hook not configured. */
  finishTurn: ("none" | "end" | "continue")[] | null;
  /** `prepareNextTurn` adds a message on these calls; null = not configured. */
  prepareNextTurn: boolean[] | null;
  /** Steering messages arriving at each poll; null = not configured. */
  steering: number[] | null;
  /** Follow-up messages arriving at each poll; null = not configured. */
  followUps: number[] | null;
  prepareRequest: boolean;
  transformContext: boolean;
  /** A hook that throws on its first call despite its contract (R56). */
  hookThrows: HookThrow;
  /** Abort when the sink receives the event with this index (-1: the signal is aborted before the call). */
  abortAt: number | null;
  /** The sink returns nothing, an already resolved promise, or one that settles a macrotask later (the loop must await it). */
  sink: "sync" | "resolved" | "macrotask";
  /** Milliseconds the tool hooks take. */
  hookDelay: number;
  recovery: RecoverySpec | null;
}

const callArb: fc.Arbitrary<CallSpec> = fc.record({
  tool: fc.constantFrom("alpha", "alpha", "beta", "beta", "seq", "missing"),
  outcome: fc.constantFrom<Outcome>("success", "success", "throw", "isError", "terminate"),
  delay: fc.integer({ min: 0, max: 3 }),
  updates: fc.integer({ min: 0, max: 2 }),
  lateUpdate: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
  before: fc.constantFrom<CallSpec["before"]>("allow", "allow", "allow", "block", "blockTerminate", "throw"),
  after: fc.constantFrom<CallSpec["after"]>("none", "none", "overrideContent", "flipError", "terminate", "throw"),
  badArgs: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  prepareThrows: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
});

const attemptArb: fc.Arbitrary<Attempt> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant("transient" as const),
      failure: fc.constantFrom<TransientFailureKind>("overloaded", "rate_limited", "server_error", "connection", "stall"),
      retryAfterMs: fc.constantFrom(null, null, 1, 4),
      afterContent: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
    }),
    weight: 5,
  },
  { arbitrary: fc.constant<Attempt>({ kind: "overflow" }), weight: 2 },
  { arbitrary: fc.constant<Attempt>({ kind: "truncated" }), weight: 2 },
);

const preludeArb: fc.Arbitrary<Attempt[]> = fc.oneof(
  { arbitrary: fc.constant<Attempt[]>([]), weight: 10 },
  { arbitrary: fc.array(attemptArb, { minLength: 1, maxLength: 3 }), weight: 5 },
  // R62: a second overflow after the compaction surfaces (prompt_too_long).
  { arbitrary: fc.constant<Attempt[]>([{ kind: "overflow" }, { kind: "overflow" }]), weight: 1 },
);

const recoveryArb: fc.Arbitrary<RecoverySpec> = fc.record({
  retry: fc.option(fc.record({ maxAttempts: fc.integer({ min: 1, max: 4 }), baseDelayMs: fc.constantFrom(0, 1, 3), maxDelayMs: fc.constantFrom(2, 10) }), { nil: null, freq: 3 }),
  outputLimit: fc.option(fc.record({ escalate: fc.boolean(), maxRecoveries: fc.integer({ min: 0, max: 3 }) }), { nil: null, freq: 3 }),
  compact: fc.option(fc.record({ thresholdTokens: fc.constantFrom(null, null, 10, 60) }), { nil: null, freq: 3 }),
  jitter: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
});

const responseArb: fc.Arbitrary<ResponseSpec> = fc.record({
  prelude: preludeArb,
  calls: fc.array(callArb, { minLength: 0, maxLength: 5 }),
  stop: fc.oneof(
    { arbitrary: fc.constant<ResponseSpec["stop"]>("natural"), weight: 12 },
    { arbitrary: fc.constantFrom<ResponseSpec["stop"]>("length", "error", "aborted"), weight: 3 },
  ),
  delayMs: fc.constantFrom(0, 0, 0, 1),
  thinking: fc.boolean(),
});

const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 2 });

export const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  responses: fc.array(responseArb, { minLength: 1, maxLength: 6 }),
  toolExecution: fc.constantFrom<Scenario["toolExecution"]>("parallel", "parallel", "sequential"),
  beforeToolCall: fc.boolean(),
  afterToolCall: fc.boolean(),
  finishTurn: optional(fc.array(fc.constantFrom<"none" | "end" | "continue">("none", "none", "end", "continue"), { maxLength: 6 })),
  prepareNextTurn: optional(fc.array(fc.boolean(), { maxLength: 6 })),
  steering: optional(fc.array(fc.constantFrom(0, 0, 1, 2), { maxLength: 8 })),
  followUps: optional(fc.array(fc.constantFrom(0, 1, 2), { maxLength: 4 })),
  prepareRequest: fc.boolean(),
  transformContext: fc.boolean(),
  hookThrows: fc.oneof(
    { arbitrary: fc.constant<HookThrow>("none"), weight: 9 },
    {
      arbitrary: fc.constantFrom<HookThrow>("finishTurn", "prepareNextTurn", "getSteeringMessages", "getFollowUpMessages", "prepareRequest", "transformContext"),
      weight: 1,
    },
  ),
  abortAt: fc.oneof({ arbitrary: fc.constant(null), weight: 2 }, { arbitrary: fc.integer({ min: -1, max: 80 }), weight: 1 }),
  sink: fc.constantFrom<Scenario["sink"]>("sync", "sync", "resolved", "macrotask"),
  hookDelay: fc.constantFrom(0, 0, 1),
  recovery: fc.option(recoveryArb, { nil: null, freq: 2 }),
});

// ---------------------------------------------------------------------------------------------
// Playing a scenario
// ---------------------------------------------------------------------------------------------

export interface Preflight {
  id: string;
  step: "prepareArguments" | "beforeToolCall";
  enteredAt: number;
  finishedAt: number;
}

export interface ScenarioRun {
  events: AnyAgentEvent[];
  messages: AgentMessage[] | undefined;
  rejection: unknown;
  actor: RunActor | undefined;
  /** Events delivered after the run settled (checked one macrotask later). */
  lateEvents: number;
  /** Requests made in total, and made after the abort. */
  requests: number;
  requestsAfterAbort: number;
  /** Index of the event at which the run was aborted, if it was. */
  abortedAt: number | null;
  /** Tool executions entered with an already aborted signal (R29). */
  executedAfterAbort: string[];
  /** Call ids whose `execute` was entered, and those `beforeToolCall`/`afterToolCall` saw, in call order. */
  executed: string[];
  beforeCalls: string[];
  afterCalls: string[];
  /** Each call's preflight steps (`prepareArguments`, `beforeToolCall`): how many events the sink had been given when the step was entered and when it finished (R21, R24, R25). */
  preflights: Preflight[];
  /** finishTurn decisions, in call order (for R8). */
  decisions: ("none" | "end" | "continue")[];
  /** Transcript-delta mismatches seen by hooks. */
  hookProblems: string[];
  /** What each request played, in order: the response index `n` it was for and the attempt (null: the response). */
  played: { n: number; attempt: Attempt | null }[];
  /** Each retry_scheduled with the attempt the request just before it played (R60). */
  retries: { event: Extract<AnyAgentEvent, { type: "retry_scheduled" }>; failed: Attempt | null }[];
  /** The compactor's calls: why, and what it returned (the same array when it found nothing). */
  compactions: { reason: string; input: AgentMessage[]; output: AgentMessage[] }[];
  /** The delays of the timers the run set on its clock, in order. */
  timers: number[];
}

const user = (content: string): AgentMessage => ({ role: "user", content, timestamp: 1 });
const ok = (content: string, extra: Partial<AgentToolResult> = {}): AgentToolResult => ({ content: [{ type: "text", text: content }], details: {}, ...extra });
const schema = { type: "object", properties: { n: { type: "number" } } };
const delay = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });

function newRecord(): ScenarioRun {
  return {
    events: [],
    messages: undefined,
    rejection: undefined,
    actor: undefined,
    lateEvents: 0,
    requests: 0,
    requestsAfterAbort: 0,
    abortedAt: null,
    executedAfterAbort: [],
    executed: [],
    beforeCalls: [],
    afterCalls: [],
    preflights: [],
    decisions: [],
    hookProblems: [],
    played: [],
    retries: [],
    compactions: [],
    timers: [],
  };
}

/**
 * The run's clock (R13): virtual time that moves only when a timer fires, a macrotask after it is
 * set, so a backoff of any length costs no real time. Shared by both processes of a restore.
 */
export function virtualClock(record: { timers: number[] }): Clock {
  let now = 1_000_000;
  return {
    now: () => now,
    monotonic: () => now,
    setTimer: (ms, fire) => {
      record.timers.push(ms);
      let live = true;
      setImmediate(() => {
        if (!live) return;
        live = false;
        now += ms;
        fire();
      });
      return () => void (live = false);
    },
  };
}

/** The scenario compactor's summary of `count` responses (it stands for them in the response count). */
const COMPACTED = /^compacted (\d+)$/;
const compactedCount = (message: AgentMessage): number => {
  const { role, content } = message as { role?: string; content?: unknown };
  const match = role === "user" && typeof content === "string" ? COMPACTED.exec(content) : null;
  return match ? Number(match[1]) : 0;
};
/** How many responses the transcript holds, those a compaction summarized included: the index of the one asked for next. */
export const responseIndex = (messages: readonly AgentMessage[]): number =>
  messages.reduce((n, message) => n + ((message as { role?: string }).role === "assistant" ? 1 : compactedCount(message)), 0);

/**
 * The transcript rebuilt from the events (R62, R61): each `message_end` appended, each
 * `transcript_replaced` replacing it, each `message_discarded` taking the last message back.
 */
export function rebuiltTranscript(events: readonly AnyAgentEvent[], start: readonly AgentMessage[] = []): AgentMessage[] {
  let transcript = [...start];
  for (const event of events) {
    if (event.type === "message_end") transcript.push(event.message);
    else if (event.type === "transcript_replaced") transcript = [...event.messages];
    else if (event.type === "message_discarded") transcript.pop();
  }
  return transcript;
}

/** What an attempt plays as a scripted response (R60–R62). */
function attemptResponse(attempt: Attempt, delayMs: number): ScriptedResponse {
  switch (attempt.kind) {
    case "transient":
      return {
        failure: attempt.failure,
        ...(attempt.retryAfterMs !== null ? { retryAfterMs: attempt.retryAfterMs } : {}),
        ...(attempt.afterContent ? { afterContent: true, content: [text("partial")] } : {}),
        delayMs,
      };
    case "overflow":
      return { failure: "prompt_too_long", delayMs };
    case "truncated":
      return { content: [text("cut")], stopReason: "length", delayMs };
  }
}

interface Implementations {
  config: AgentLoopConfig;
  tools: AgentTool[];
  streamFn: ScriptedStreamFn;
}

/**
 * The scenario's model, hooks and tools, recording into `record`. Each call builds fresh ones
 * (hook counters start again), as a restored run gets (R13). `undelivered`: the events an async
 * sink has not settled yet (no app code may start meanwhile).
 */
function implementations(scenario: Scenario, record: ScenarioRun, undelivered: ReadonlySet<AnyAgentEvent>): Implementations {
  const calls = new Map<string, CallSpec>();
  const responses: ScriptedResponse[] = scenario.responses.map((response, r) => {
    const content: ScriptedBlock[] = response.thinking ? [{ type: "thinking", thinking: "hm", signature: "s" }] : [];
    content.push(text("ok"));
    response.calls.forEach((call, c) => {
      const id = `r${r}c${c}`;
      calls.set(id, call);
      // The id travels in the arguments so prepareArguments (which sees only them) knows its call.
      content.push(toolCall(call.tool, call.badArgs ? { n: "not a number", id } : { n: c, id }, id));
    });
    const stopReason = response.stop === "natural" ? undefined : response.stop;
    return { content, ...(stopReason ? { stopReason } : {}), ...(response.stop === "error" ? { errorMessage: "provider failed" } : {}), delayMs: response.delayMs };
  });

  // SPEC "Entry points": emit is awaited, so no app code starts while an event is undelivered.
  const entered = (what: string, _callId?: string) => {
    const blocking = [...undelivered];
    if (blocking.length > 0) record.hookProblems.push(`emit not awaited: ${what} started while ${blocking.map((e) => e.type).join(", ")} was undelivered`);
  };

  const execute: AgentTool["execute"] = async (id, _params, signal, onUpdate) => {
    entered(`execute ${id}`, id);
    record.executed.push(id);
    if (signal?.aborted) record.executedAfterAbort.push(id);
    const spec = calls.get(id)!;
    for (let i = 0; i < spec.updates; i++) onUpdate?.(ok(`update ${i}`));
    if (spec.lateUpdate) setTimeout(() => onUpdate?.(ok("late update")), 0);
    await delay(spec.delay, signal);
    switch (spec.outcome) {
      case "throw":
        throw new Error(`tool ${id} threw`);
      case "isError":
        return ok(`tool ${id} failed`, { isError: true });
      case "terminate":
        return ok(`tool ${id} done`, { terminate: true });
      default:
        return ok(`tool ${id} done`);
    }
  };
  const tool = (name: string, extra: Partial<AgentTool> = {}): AgentTool => ({ name, label: name, description: name, parameters: schema, execute, ...extra });
  const prepareArguments = (args: unknown) => {
    const id = (args as { id: string }).id;
    entered(`prepareArguments ${id}`, id);
    const at = record.events.length;
    record.preflights.push({ id, step: "prepareArguments", enteredAt: at, finishedAt: at });
    if (calls.get(id)!.prepareThrows) throw new Error(`prepareArguments ${id} threw`);
    return args;
  };

  const throwsOnce = (() => {
    let thrown = false;
    return (hook: HookThrow) => {
      if (scenario.hookThrows !== hook || thrown) return;
      thrown = true;
      throw new Error(`${hook} threw (scenario)`);
    };
  })();

  const config: AgentLoopConfig = { model: scriptedModel, convertToLlm: (messages) => (entered("convertToLlm"), messages as never), toolExecution: scenario.toolExecution };
  if (scenario.beforeToolCall) {
    config.beforeToolCall = async ({ toolCall: call }) => {
      entered("beforeToolCall", call.id);
      record.beforeCalls.push(call.id);
      const preflight: Preflight = { id: call.id, step: "beforeToolCall", enteredAt: record.events.length, finishedAt: Infinity };
      record.preflights.push(preflight);
      try {
        await delay(scenario.hookDelay);
        const spec = calls.get(call.id)!;
        if (spec.before === "throw") throw new Error("beforeToolCall threw");
        if (spec.before === "block") return { block: true, reason: "blocked" };
        if (spec.before === "blockTerminate") return { block: true, terminate: true };
        return undefined;
      } finally {
        preflight.finishedAt = record.events.length;
      }
    };
  }
  if (scenario.afterToolCall) {
    config.afterToolCall = async ({ toolCall: call }): Promise<AfterToolCallResult | undefined> => {
      entered("afterToolCall", call.id);
      record.afterCalls.push(call.id);
      await delay(scenario.hookDelay);
      const spec = calls.get(call.id)!;
      if (spec.after === "throw") throw new Error("afterToolCall threw");
      if (spec.after === "overrideContent") return { content: [{ type: "text", text: "overridden" }] };
      if (spec.after === "flipError") return { isError: true };
      if (spec.after === "terminate") return { terminate: true };
      return undefined;
    };
  }
  if (scenario.finishTurn) {
    const decisions = scenario.finishTurn;
    config.finishTurn = async (turn) => {
      entered("finishTurn");
      const tail = turn.context.messages.slice(turn.context.messages.length - turn.newMessages.length);
      if (JSON.stringify(tail) !== JSON.stringify(turn.newMessages)) record.hookProblems.push("finishTurn: newMessages are not the transcript's tail");
      throwsOnce("finishTurn");
      const decision = decisions[record.decisions.length] ?? "none";
      record.decisions.push(decision);
      return decision === "none" ? undefined : { action: decision };
    };
  }
  if (scenario.prepareNextTurn) {
    const adds = scenario.prepareNextTurn;
    let n = 0;
    config.prepareNextTurn = async () => {
      entered("prepareNextTurn");
      throwsOnce("prepareNextTurn");
      return adds[n++] ? { messages: [user(`prepared ${n}`)] } : undefined;
    };
  }
  if (scenario.steering) {
    const arrivals = scenario.steering;
    let n = 0;
    config.getSteeringMessages = async () => {
      entered("getSteeringMessages");
      throwsOnce("getSteeringMessages");
      const count = arrivals[n++] ?? 0;
      return Array.from({ length: count }, (_, i) => user(`steer ${n}.${i}`));
    };
  }
  if (scenario.followUps) {
    const arrivals = scenario.followUps;
    let n = 0;
    config.getFollowUpMessages = async () => {
      entered("getFollowUpMessages");
      throwsOnce("getFollowUpMessages");
      const count = arrivals[n++] ?? 0;
      return Array.from({ length: count }, (_, i) => user(`follow ${n}.${i}`));
    };
  }
  if (scenario.prepareRequest) {
    config.prepareRequest = async () => {
      entered("prepareRequest");
      throwsOnce("prepareRequest");
      return undefined;
    };
  }
  if (scenario.transformContext) {
    config.transformContext = async (messages) => {
      entered("transformContext");
      throwsOnce("transformContext");
      return messages;
    };
  }

  const recovery = scenario.recovery;
  if (recovery?.retry) config.retry = { ...recovery.retry };
  if (recovery?.outputLimit) {
    config.outputLimit = { maxRecoveries: recovery.outputLimit.maxRecoveries };
    // The request already asks for the model's maximum: nothing to escalate to (R61).
    if (!recovery.outputLimit.escalate) config.maxTokens = scriptedModel.maxTokens;
  }
  if (recovery?.compact) {
    // Deterministic: everything before the last user message (a turn boundary: never between a
    // call and its result) becomes one summary that counts the responses it stands for.
    const compactor: Compactor = async (request) => {
      entered("compactor");
      const messages = request.messages;
      let cut = -1;
      for (let i = messages.length - 1; i > 0; i--) {
        if ((messages[i] as { role?: string }).role === "user") {
          cut = i;
          break;
        }
      }
      const output = cut <= 0 ? messages : [user(`compacted ${responseIndex(messages.slice(0, cut))}`), ...messages.slice(cut)];
      record.compactions.push({ reason: request.reason, input: messages, output });
      return output;
    };
    config.compact = { compactor, ...(recovery.compact.thresholdTokens !== null ? { thresholdTokens: recovery.compact.thresholdTokens } : {}) };
  }

  // The response to the n-th request (n responses so far), whichever process makes it: a restored
  // run gets the same model responses (R13). Before it, the response's attempts, one per request
  // for it (counted per process: a restored run plays them again).
  const attemptsMade = new Map<number, number>();
  const stream = scriptedStreamFn(({ context }) => {
    const n = responseIndex(context.messages);
    const k = attemptsMade.get(n) ?? 0;
    attemptsMade.set(n, k + 1);
    const prelude = recovery ? (scenario.responses[n]?.prelude ?? []) : [];
    const attempt = k < prelude.length ? prelude[k] : null;
    record.played.push({ n, attempt });
    if (attempt) return attemptResponse(attempt, scenario.responses[n].delayMs);
    return responses[n] ?? { content: [text("done")] };
  });
  const streamFn: typeof stream = Object.assign(
    (...args: Parameters<typeof stream>) => {
      // R12, R40: each request sees exactly the transcript so far (identity convertToLlm and
      // transformContext): every message ended before it, in order.
      // With recovery, the transcript so far is the one rebuilt from the events (R62, R61).
      const ended = rebuiltTranscript(record.events);
      if (JSON.stringify(args[1].messages) !== JSON.stringify(ended)) record.hookProblems.push(`request ${record.requests + 1} does not see the transcript so far`);
      // R6, R60: a response shown as failed is the run's last; a withheld failure is never shown.
      const lastAssistant = [...ended].reverse().find((m) => (m as { role?: string }).role === "assistant") as AssistantMessage | undefined;
      if (lastAssistant && (lastAssistant.stopReason === "error" || lastAssistant.stopReason === "aborted")) {
        record.hookProblems.push(`request ${record.requests + 1} follows the failed response "${lastAssistant.errorMessage}"`);
      }
      entered("the stream function");
      record.requests++;
      if (record.abortedAt !== null) record.requestsAfterAbort++;
      return stream(...args);
    },
    { calls: stream.calls },
  );

  const tools = [tool("alpha", { prepareArguments }), tool("beta"), tool("seq", { executionMode: "sequential", prepareArguments })];
  return { config, tools, streamFn };
}

export async function playScenario(scenario: Scenario): Promise<ScenarioRun> {
  const controller = new AbortController();
  const record = newRecord();
  const undelivered = new Set<AnyAgentEvent>();
  const { config, tools, streamFn } = implementations(scenario, record, undelivered);
  const clock = virtualClock(record);
  if (scenario.abortAt === -1) {
    record.abortedAt = -1;
    controller.abort();
  }
  let settled = false;
  const sink = (event: AnyAgentEvent) => {
    if (settled) record.lateEvents++;
    if (scenario.abortAt === record.events.length && record.abortedAt === null) {
      record.abortedAt = record.events.length;
      controller.abort();
    }
    record.events.push(event);
    if (event.type === "retry_scheduled") record.retries.push({ event, failed: record.played.at(-1)?.attempt ?? null });
    if (scenario.sink === "resolved") return Promise.resolve();
    if (scenario.sink === "sync") return undefined;
    undelivered.add(event);
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        undelivered.delete(event);
        resolve();
      }),
    );
  };

  // R66: the loop's own events into the same ordered record as pi's.
  config.onRuntimeEvent = sink;
  try {
    record.messages = await runAgentLoop(
      [user("hi")],
      { messages: [], tools },
      config,
      sink,
      controller.signal,
      streamFn,
      { onActor: (actor) => (record.actor = actor), clock, random: () => scenario.recovery?.jitter ?? 0.5 },
    );
  } catch (error) {
    record.rejection = error;
  }
  settled = true;
  // Anything still in flight (a tool, a stray update) would show up by the next macrotask.
  await new Promise((resolve) => setTimeout(resolve, 0));
  return record;
}

// ---------------------------------------------------------------------------------------------
// Playing a scenario with a restore (R13)
// ---------------------------------------------------------------------------------------------

export interface RestoredScenarioRun extends ScenarioRun {
  /** The run state the first process was persisted in; null when the run ended first. */
  restoredIn: string | null;
  /** Events the first process delivered after it was stopped (none may come). */
  strayEvents: AnyAgentEvent[];
}

/**
 * Plays `scenario` as an embedded run (`createAgentRunLogic`) and, at the run's `restoreAt`-th
 * macrostep, persists it, JSON round-trips the snapshot, stops it and restores it with freshly
 * built implementations (R13). Events are delivered synchronously (an embedded run's events go
 * to an RxJS Subject); an abort is the run's own `run.abort`.
 */
export async function playRestoredScenario(scenario: Scenario, restoreAt: number, inspect?: (event: InspectionEvent) => void): Promise<RestoredScenarioRun> {
  const record: RestoredScenarioRun = { ...newRecord(), restoredIn: null, strayEvents: [] };
  const none = new Set<AnyAgentEvent>();
  // One clock for both processes (the world's time); the same random source in each.
  const time = { clock: virtualClock(record), random: () => scenario.recovery?.jitter ?? 0.5 };
  const input = { prompts: [user("hi")], messages: [] };
  let current: RunActor | undefined;
  let stopped = false;
  const sink = (from: RunActor) => (event: AnyAgentEvent) => {
    if (from !== current || stopped) return void record.strayEvents.push(event);
    record.events.push(event);
    if (event.type === "retry_scheduled") record.retries.push({ event, failed: record.played.at(-1)?.attempt ?? null });
    // After the push: the abort may make the run persist (and stop) at once.
    if (scenario.abortAt === record.events.length - 1 && record.abortedAt === null) {
      record.abortedAt = record.events.length - 1;
      from.send({ type: "run.abort" });
    }
  };
  const start = (actor: RunActor) => {
    current = actor;
    record.actor = actor;
    agentEvents(actor).subscribe(sink(actor));
    // Before start: the first process may be stopped inside its own start (restoreAt 0).
    const done = toPromise(actor) as Promise<AgentMessage[] | undefined>;
    actor.start();
    return done;
  };

  try {
    // (Typed as the run actor the invariants inspect: the embedded logic is the same machine.)
    const first = createActor(createAgentRunLogic({ ...implementations(scenario, record, none), ...time }), { input, inspect }) as unknown as RunActor;
    let macrosteps = 0;
    let persisted: string | undefined;
    first.subscribe((snapshot) => {
      if (persisted !== undefined || snapshot.status !== "active" || macrosteps++ !== restoreAt) return;
      persisted = JSON.stringify(first.getPersistedSnapshot());
      record.restoredIn = JSON.stringify(snapshot.value);
      stopped = true;
      first.stop();
      // R13: a step in flight is issued again and emits its start events again: a request its
      // message_start, a preflight its calls' tool_execution_start (and immediate results); what
      // the first process emitted of that step is superseded by the re-issue.
      const superseded = supersededFrom(record.events, snapshot.value, (snapshot.context as { turn: { batch: { mode: string } | null } }).turn.batch?.mode);
      if (superseded >= 0) record.events.splice(superseded);
    });
    if (scenario.abortAt === -1) record.abortedAt = -1;
    const done = start(first);
    if (scenario.abortAt === -1) first.send({ type: "run.abort" });
    const output = await done;
    if (persisted === undefined) record.messages = output;
    else {
      stopped = false;
      const second = createActor(createAgentRunLogic({ ...implementations(scenario, record, none), ...time }), { snapshot: JSON.parse(persisted), input, inspect }) as unknown as RunActor;
      record.messages = await start(second);
    }
  } catch (error) {
    record.rejection = error;
  }
  // Anything still in flight (a tool, a stray update) would show up by the next macrotask.
  await new Promise((resolve) => setTimeout(resolve, 0));
  return record;
}

/** Where the events of the step in flight at a restore begin (see R13's re-issue), or -1. */
function supersededFrom(events: readonly AnyAgentEvent[], value: unknown, mode: string | undefined): number {
  const state = JSON.stringify(value);
  const lastIndex = (test: (event: AnyAgentEvent) => boolean) => {
    for (let i = events.length - 1; i >= 0; i--) if (test(events[i])) return i;
    return -1;
  };
  const ended = (role: string) => (event: AnyAgentEvent) => event.type === "message_end" && (event.message as { role: string }).role === role;
  if (state.includes("streaming")) {
    // The request in flight, if it had begun: its assistant message from its start, even when its
    // message_end was delivered already (the reply had not reached the run: it is re-issued). An
    // attempt R61 discarded is finished, not in flight.
    const start = lastIndex((event) => event.type === "message_start" && (event.message as { role: string }).role === "assistant");
    if (start < lastIndex((event) => event.type === "turn_start")) return -1;
    return events.slice(start).some((event) => event.type === "message_discarded") ? -1 : start;
  }
  if (state.includes("preflightingCall")) {
    // A parallel batch's preflight covers every call; a sequential one, the call in progress.
    const after = mode === "parallel" ? lastIndex(ended("assistant")) : Math.max(lastIndex(ended("assistant")), lastIndex(ended("toolResult")));
    const start = events.findIndex((event, i) => i > after && event.type === "tool_execution_start");
    return start;
  }
  return -1;
}
