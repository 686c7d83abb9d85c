/**
 * The run machine's test model: the synthetic events a traversal feeds it in each state (the step
 * worker's `step.<job>.done`/`step.failed` replies, the batch's preflight results and the
 * tool-call children's `xstate.done.actor.tool:<i>`/`xstate.error.actor.tool:<i>`), a bounded state serialization,
 * the paths, and for each path the scripted configuration that makes the real runtime follow it.
 * (`run.abort` and `step.reissue` are taken by the directed runs of directed-runs.ts.)
 */
import { transition, type SnapshotFrom } from "xstate";
import { getShortestPaths, type StatePath } from "xstate/graph";
import type { AgentLoopConfig, AgentMessage, AgentTool, AssistantMessage, Compactor, Message, ScriptedResponse, ToolCall } from "../../src/index.js";
import { createRequestLimiter, scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/index.js";
import { runMachine, type RunEvent } from "../../machines/run.machine.js";
import type { ToolCallOutput } from "../../machines/tool-call.machine.js";
import type { HookFlags, RunContext, RunInput, StreamedResponse } from "../../machines/run.types.js";
import { recoverySettings } from "../../src/loop/recovery-settings.js";
import { polledMessages, saysFollowUpsEmpty, type Preflight, type SteeringPoll, type StepJobs, type StepName } from "../../machines/steps.js";
import { ownQueuePolls } from "../../src/actors/own-queues.js";
import { FAULTY_TOOLS, statePath, type LoopArgs } from "./harness.js";

export type RunSnapshot = SnapshotFrom<typeof runMachine>;
export type RunPath = StatePath<RunSnapshot, RunEvent>;

export interface RunVariant {
  name: string;
  hooks: HookFlags;
  toolExecution: "parallel" | "sequential";
  /** R63: a budget the first turn reaches (its transition into done). */
  budget?: { maxTurns: number };
  /** R60–R62: retries (2 attempts), output-limit recovery (1 recovery), compaction on overflow, and with `threshold` before every request. */
  recovery?: "overflow" | "threshold";
}

/** R60–R62 as the recovery variants configure them (the compactor is the path's, see `realize`). */
function recoveryConfig(variant: RunVariant, compactor: Compactor): Partial<AgentLoopConfig> {
  if (!variant.recovery) return {};
  return {
    retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 },
    outputLimit: { maxRecoveries: 1 },
    compact: { compactor, ...(variant.recovery === "threshold" ? { thresholdTokens: 0 } : {}) },
  };
}

const noHooks: HookFlags = {
  transformContext: false,
  getApiKey: false,
  getSteeringMessages: false,
  getFollowUpMessages: false,
  prepareNextTurn: false,
  prepareRequest: false,
  finishTurn: false,
  beforeToolCall: false,
  afterToolCall: false,
  requestLimiter: false,
};
const allHooks: HookFlags = Object.fromEntries(Object.keys(noHooks).map((key) => [key, true])) as unknown as HookFlags;

/** Input variants: which hooks are configured decides which states are reachable. */
export const runVariants: RunVariant[] = [
  { name: "no hooks, parallel", hooks: noHooks, toolExecution: "parallel" },
  { name: "every hook, parallel", hooks: allHooks, toolExecution: "parallel" },
  { name: "every hook, sequential", hooks: allHooks, toolExecution: "sequential" },
  {
    name: "finishTurn + transformContext + steering (no follow-ups), parallel",
    hooks: { ...noHooks, finishTurn: true, transformContext: true, getSteeringMessages: true },
    toolExecution: "parallel",
  },
  {
    name: "beforeToolCall + prepareNextTurn (no steering, no finishTurn), parallel",
    hooks: { ...noHooks, beforeToolCall: true, prepareNextTurn: true },
    toolExecution: "parallel",
  },
  {
    name: "finishTurn + afterToolCall (no steering, no follow-ups), parallel",
    hooks: { ...noHooks, finishTurn: true, afterToolCall: true },
    toolExecution: "parallel",
  },
  { name: "R63: maxTurns 1, steering, parallel", hooks: { ...noHooks, getSteeringMessages: true }, toolExecution: "parallel", budget: { maxTurns: 1 } },
  {
    name: "prepareRequest + getApiKey + follow-ups + beforeToolCall, sequential",
    hooks: { ...noHooks, prepareRequest: true, getApiKey: true, getFollowUpMessages: true, beforeToolCall: true },
    toolExecution: "sequential",
  },
  { name: "R60–R62: recovery on, proactive compaction, no hooks, parallel", hooks: noHooks, toolExecution: "parallel", recovery: "threshold" },
  {
    name: "R60–R62: recovery on, proactive compaction, getApiKey + transformContext + steering, parallel",
    hooks: { ...noHooks, getApiKey: true, transformContext: true, getSteeringMessages: true },
    toolExecution: "parallel",
    recovery: "threshold",
  },
  {
    name: "R60–R62: recovery on, compaction on overflow, prepareRequest + prepareNextTurn, sequential",
    hooks: { ...noHooks, prepareRequest: true, prepareNextTurn: true, finishTurn: true },
    toolExecution: "sequential",
    recovery: "overflow",
  },
  {
    name: "request limiter + R60–R62 recovery + getApiKey, parallel",
    hooks: { ...noHooks, requestLimiter: true, getApiKey: true },
    toolExecution: "parallel",
    recovery: "overflow",
  },
  { name: "request limiter, no hooks, parallel", hooks: { ...noHooks, requestLimiter: true }, toolExecution: "parallel", recovery: "overflow" },
  { name: "R62: proactive compaction + prepareRequest, parallel", hooks: { ...noHooks, prepareRequest: true }, toolExecution: "parallel", recovery: "threshold" },
];

/** Responses that ask for tools are offered for the first requests only; later ones just answer. */
const TOOL_REQUESTS = 2;
/** From this many requests on, hooks bring nothing new: the run winds down. */
const QUIET_AFTER = 3;

const user = (content: string): AgentMessage => ({ role: "user", content, timestamp: 1 });

type ResponseKind = "stop" | "error" | "aborted" | "lengthNoCalls" | "toolUse1" | "toolUse2" | "length1" | "overloaded" | "overflow";

function assistant(kind: ResponseKind): AssistantMessage {
  const calls = kind === "toolUse1" || kind === "length1" ? 1 : kind === "toolUse2" ? 2 : 0;
  const content: AssistantMessage["content"] = [{ type: "text", text: "" }];
  for (let i = 0; i < calls; i++) content.push({ type: "toolCall", id: `m${i}`, name: "t", arguments: {} });
  const stopReason =
    kind === "lengthNoCalls" || kind === "length1" ? "length" : calls > 0 ? "toolUse" : kind === "stop" ? "stop" : kind === "aborted" ? "aborted" : "error";
  return {
    role: "assistant",
    content,
    api: "model",
    provider: "model",
    model: "model",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: stopReason as AssistantMessage["stopReason"],
    timestamp: 0,
    // The kind travels with the message so a path can be realized from its events.
    errorMessage: kind,
  };
}

/** Responses the run accepted (a compaction starts `newMessages` afresh, so counted from turns). */
const requestsOf = (context: RunContext) => context.spent.turns + (context.turn.open && context.turn.assistant ? 1 : 0);

/** The stream step's reply: withheld (R60, R62) for the failures before content the variant recovers from. */
function streamed(kind: ResponseKind): StreamedResponse {
  const message = assistant(kind);
  if (kind === "overloaded") return { message, withheld: true, failure: { retryable: true, afterMs: null, kind: "overloaded", contextOverflow: false } };
  if (kind === "overflow") return { message, withheld: true, failure: { retryable: false, afterMs: null, kind: "unknown", contextOverflow: true } };
  return { message, withheld: false, failure: kind === "error" ? { retryable: false, afterMs: null, kind: "unknown", contextOverflow: false } : null };
}

const toolOutput = (index: number, terminate: boolean): ToolCallOutput => ({
  index,
  result: { content: [{ type: "text", text: terminate ? "T" : "F" }], details: {}, ...(terminate ? { terminate: true } : {}) },
  isError: false,
  settledAt: 0,
});
const toolDone = (index: number, terminate: boolean) =>
  ({ type: `xstate.done.actor.tool:${index}`, actorId: `tool:${index}`, output: toolOutput(index, terminate) }) as unknown as RunEvent;
const ready = (index: number): Preflight => ({ index, ready: true, args: {} });
const immediate = (index: number, terminate: boolean): Preflight => ({
  index,
  ready: false,
  result: { content: [{ type: "text", text: terminate ? "T" : "F" }], details: {}, isError: true, ...(terminate ? { terminate: true } : {}) },
  settledAt: 0,
});
const preflighted = (preflights: Preflight[]) => done("preflightCalls", preflights);
const toolError = (index: number) =>
  ({ type: `xstate.error.actor.tool:${index}`, actorId: `tool:${index}`, error: new Error("crashed") }) as unknown as RunEvent;
const failed = (job: StepName): RunEvent => ({ type: "step.failed", job, error: new Error(`${job} failed`), at: 0 });
/** A step's reply, as the worker sends it (`at`: the injected clock's time). */
const done = <K extends StepName>(job: K, output: StepJobs[K]["output"]) => ({ type: `step.${job}.done`, output, at: 0 }) as RunEvent;

/** The events a traversal offers in `snapshot` (only those its current state handles). */
export function runEvents(snapshot: RunSnapshot): RunEvent[] {
  const context = snapshot.context;
  const quiet = requestsOf(context) >= QUIET_AFTER;
  const batch = context.turn.batch;
  const before = context.settings.hooks.beforeToolCall;
  switch (statePath(snapshot.value)) {
    case "pollingInitialSteering":
    case "turn.repollingSteering":
      return [done("getSteeringMessages", []), ...(quiet ? [] : [done("getSteeringMessages", [user("steer")])]), failed("getSteeringMessages")];
    case "pollingSteering": {
      // R10: with both polls configured, the Agent's own queues may also say no follow-up waits.
      const hooks = context.settings.hooks;
      const known = hooks.getSteeringMessages && hooks.getFollowUpMessages ? [done("getSteeringMessages", { messages: [], followUps: "none" })] : [];
      return [done("getSteeringMessages", []), ...known, ...(quiet ? [] : [done("getSteeringMessages", [user("steer")])]), failed("getSteeringMessages")];
    }
    case "pollingFollowUps":
      return [done("getFollowUpMessages", []), ...(quiet ? [] : [done("getFollowUpMessages", [user("follow")])]), failed("getFollowUpMessages")];
    case "turn.preparingNextTurn":
      return [done("prepareNextTurn", {}), ...(quiet ? [] : [done("prepareNextTurn", { prepared: [user("prepared")] })]), failed("prepareNextTurn")];
    case "turn.preparingRequest":
      return [done("prepareRequest", {}), failed("prepareRequest")];
    case "turn.requesting.transformingContext":
      return [done("transformContext", context.messages), failed("transformContext")];
    case "turn.requesting.convertingToLlm":
      return [done("convertToLlm", []), failed("convertToLlm")];
    case "turn.requesting.resolvingApiKey":
      return [done("resolveApiKey", null), failed("resolveApiKey")];
    case "turn.requesting.streaming": {
      const kinds: ResponseKind[] = quiet ? ["stop"] : ["stop", "error", "aborted", "lengthNoCalls"];
      if (requestsOf(context) < TOOL_REQUESTS) kinds.push("toolUse1", "toolUse2", "length1");
      if (!quiet && context.settings.recovery.retry) kinds.push("overloaded", "overflow");
      return [...kinds.map((kind) => done("streamResponse", streamed(kind))), failed("streamResponse")];
    }
    // (The backoff's draw and wait run no app code that could fail; an abort during the wait is a directed run.)
    case "turn.requesting.schedulingRetry":
      return [done("drawBackoff", 0)];
    case "turn.requesting.backingOff":
      return [done("waitForRetry", null)];
    case "turn.requesting.awaitingRequestSlot":
      return [done("acquireRequestSlot", null)];
    case "turn.compactingOnOverflow":
    case "turn.compactingProactively":
      // Nothing to compact (the transcript itself back), a replacement, or a compactor that throws.
      return [done("compact", null), done("compact", context.messages.slice()), failed("compact")];
    case "turn.finishingTurn":
      return [
        done("finishTurn", null),
        ...(quiet ? [] : (["end", "continue"] as const).map((output) => done("finishTurn", output))),
        failed("finishTurn"),
      ];
    case "turn.executingTools.preflightingCall": {
      // R24: the call in progress passed its preflight, or got an immediate result (one that
      // terminates needs a blocking beforeToolCall).
      const i = batch!.cursor;
      return [preflighted([ready(i)]), preflighted([immediate(i, false)]), ...(before ? [preflighted([immediate(i, true)])] : [])];
    }
    case "turn.executingTools.runningSequentially":
      return [toolDone(batch!.cursor, false), toolDone(batch!.cursor, true), toolError(batch!.cursor)];
    case "turn.executingTools.preflightingCalls": {
      // R25: every call's preflight in one step: all passed, none passed, or the first one not.
      const indexes = batch!.calls.map((_, i) => i);
      const firstImmediate = (terminate: boolean) => indexes.map((i) => (i === 0 ? immediate(i, terminate) : ready(i)));
      return [
        preflighted(indexes.map(ready)),
        preflighted(indexes.map((i) => immediate(i, false))),
        ...(before ? [preflighted(indexes.map((i) => immediate(i, true)))] : []),
        ...(indexes.length > 1 ? [preflighted(firstImmediate(false)), ...(before ? [preflighted(firstImmediate(true))] : [])] : []),
      ];
    }
    case "turn.executingTools.runningInParallel": {
      // Completion order does not change the run's states: the lowest unsettled call finishes first.
      const i = batch!.outcomes.findIndex((outcome) => outcome === null);
      return i < 0 ? [] : [toolDone(i, false), toolDone(i, true), toolError(i)];
    }
    default:
      return [];
  }
}

/** State value plus the few context fields that decide what comes next; bounded by QUIET_AFTER. */
export function serializeRunState(snapshot: RunSnapshot): string {
  const { context } = snapshot;
  const { turn } = context;
  return JSON.stringify([
    snapshot.status,
    snapshot.value,
    Math.min(requestsOf(context), QUIET_AFTER),
    context.pending.length > 0,
    context.prepared.length > 0,
    turn.open,
    turn.assistant ? turn.assistant.errorMessage : null,
    turn.decision,
    turn.toolResults.length > 0,
    turn.batch ? [turn.batch.cursor, turn.batch.outcomes.map((o) => (o === null ? "-" : o.result.terminate ? "T" : "F"))] : null,
    context.recovery,
  ]);
}

export function runInputFor(variant: RunVariant): RunInput {
  return {
    prompts: [user("hi")],
    messages: [],
    tools: [],
    sequentialTools: [],
    siblingCancellingTools: [],
    model: scriptedModel,
    thinkingLevel: "off",
    toolExecution: variant.toolExecution,
    hooks: variant.hooks,
    startedAt: 0,
    ...(variant.budget ? { budget: variant.budget } : {}),
    ...(variant.recovery ? { recovery: recoverySettings({ model: scriptedModel, convertToLlm: (m) => m as Message[], ...recoveryConfig(variant, async ({ messages }) => messages) }) } : {}),
  };
}

/**
 * The leaves of the shortest-path tree (every abstract state lies on one), plus, for each
 * abstract edge whose state-value change no leaf shows, the shortest path through that edge.
 */
export function runPaths(variant: RunVariant): RunPath[] {
  const paths = getShortestPaths(runMachine, {
    input: runInputFor(variant),
    events: runEvents,
    serializeState: serializeRunState,
    limit: 200_000,
  }) as RunPath[];
  const keyOf = (path: RunPath) => path.steps.map((step) => serializeRunState(step.state)).join("\n");
  const prefixes = new Set<string>();
  for (const path of paths) {
    const keys = path.steps.map((step) => serializeRunState(step.state));
    for (let n = 1; n < keys.length; n++) prefixes.add(keys.slice(0, n).join("\n"));
  }
  const leaves = paths.filter((path) => !prefixes.has(keyOf(path)));

  // Abstract edges shown by the leaves: value before, event, value after, and whether messages are
  // pending after it (one event may reach the same state by different routes: follow-ups received
  // vs. an explicit continue both lead from pollingFollowUps to the next turn)...
  const edgeKey = (from: RunSnapshot, event: RunEvent, to: RunSnapshot) =>
    `${JSON.stringify(from.value)} ${eventKind(event)} ${JSON.stringify(to.value)} ${to.context.pending.length > 0}`;
  const shown = new Set<string>();
  for (const path of leaves) for (let i = 1; i < path.steps.length; i++) shown.add(edgeKey(path.steps[i - 1].state, path.steps[i].event, path.steps[i].state));
  // ...and, for every other one, a path that takes it: the shortest path to its source, then the edge.
  const extra: RunPath[] = [];
  for (const path of paths) {
    for (const event of runEvents(path.state)) {
      const [next] = transition(runMachine, path.state, event);
      const key = edgeKey(path.state, event, next);
      if (shown.has(key)) continue;
      shown.add(key);
      extra.push({ state: next, weight: path.weight + 1, steps: [...path.steps, { state: next, event }] });
    }
  }
  return [...leaves, ...extra];
}

export function eventKind(event: { type: string }): string {
  if (event.type.startsWith("xstate.done.actor.")) return "xstate.done.actor";
  if (event.type.startsWith("xstate.error.actor.")) return "xstate.error.actor";
  return event.type;
}

// ---------------------------------------------------------------------------------------------
// Realizing a path with the real runtime
// ---------------------------------------------------------------------------------------------

type Decision = "none" | "msg" | "throw";

interface Plan {
  steering: Decision[];
  /** R10: per steering poll, whether its reply says the follow-up queue is empty (the Agent's own queues). */
  followUpsEmpty: ("empty" | "unknown")[];
  followUps: Decision[];
  prepareNextTurn: Decision[];
  prepareRequest: Decision[];
  transformContext: Decision[];
  convertToLlm: Decision[];
  getApiKey: Decision[];
  compact: Decision[];
  finishTurn: ("none" | "end" | "continue" | "throw")[];
  responses: { kind: ResponseKind | "throw"; names: string[] }[];
}

/** Tool behaviours by name: what the real runtime does for each call the path needs. */
const TOOLS = {
  ok: "ok",
  term: "term",
  missing: "missing",
  blockTerm: "blockTerm",
} as const;

const result = (text: string, terminate = false) => ({ content: [{ type: "text" as const, text }], details: {}, ...(terminate ? { terminate: true } : {}) });
const schema = { type: "object", properties: {} };
const mkTool = (name: string, execute: AgentTool["execute"]): AgentTool => ({ name, label: name, description: name, parameters: schema, execute });

const tools: AgentTool[] = [
  mkTool(TOOLS.ok, async () => result("ok")),
  mkTool(TOOLS.term, async () => result("term", true)),
  mkTool(TOOLS.blockTerm, async () => result("never runs")),
  mkTool(FAULTY_TOOLS.crash, async () => result("never runs")),
];

/** Reads the path's events as the decisions of hooks, the model and tools, in call order. */
export function planOf(path: RunPath): Plan {
  const plan: Plan = {
    steering: [],
    followUpsEmpty: [],
    followUps: [],
    prepareNextTurn: [],
    prepareRequest: [],
    transformContext: [],
    convertToLlm: [],
    getApiKey: [],
    compact: [],
    finishTurn: [],
    responses: [],
  };
  let names: string[] = [];
  for (let i = 1; i < path.steps.length; i++) {
    const state = statePath(path.steps[i - 1].state.value);
    const event = path.steps[i].event as RunEvent & { output?: unknown };
    const isFailed = event.type === "step.failed";
    const list = (output: unknown): Decision => (isFailed ? "throw" : polledMessages(output as SteeringPoll).length > 0 ? "msg" : "none");
    const index = Number(event.type.split("tool:")[1]);
    switch (state) {
      case "pollingInitialSteering":
      case "turn.repollingSteering":
      case "pollingSteering":
        plan.steering.push(list(event.output));
        plan.followUpsEmpty.push(!isFailed && saysFollowUpsEmpty(event.output as SteeringPoll) ? "empty" : "unknown");
        break;
      case "pollingFollowUps":
        plan.followUps.push(list(event.output));
        break;
      case "turn.preparingNextTurn":
        plan.prepareNextTurn.push(isFailed ? "throw" : (event.output as { prepared?: unknown[] }).prepared ? "msg" : "none");
        break;
      case "turn.preparingRequest":
        plan.prepareRequest.push(isFailed ? "throw" : "none");
        break;
      case "turn.requesting.transformingContext":
        plan.transformContext.push(isFailed ? "throw" : "none");
        break;
      case "turn.requesting.convertingToLlm":
        plan.convertToLlm.push(isFailed ? "throw" : "none");
        break;
      case "turn.requesting.resolvingApiKey":
        plan.getApiKey.push(isFailed ? "throw" : "none");
        break;
      case "turn.requesting.streaming": {
        const message = isFailed ? undefined : (event.output as StreamedResponse).message;
        const kind = message ? (message.errorMessage as ResponseKind) : "throw";
        const calls = message ? message.content.filter((b): b is ToolCall => b.type === "toolCall") : [];
        names = calls.map(() => TOOLS.ok);
        plan.responses.push({ kind, names });
        break;
      }
      case "turn.compactingOnOverflow":
      case "turn.compactingProactively":
        plan.compact.push(isFailed ? "throw" : event.output === null ? "none" : "msg");
        break;
      case "turn.finishingTurn":
        plan.finishTurn.push(isFailed ? "throw" : ((event.output as "end" | "continue" | null) ?? "none"));
        break;
      case "turn.executingTools.preflightingCall":
      case "turn.executingTools.preflightingCalls":
        // An immediate result: an unknown tool, or one beforeToolCall blocks with terminate.
        for (const preflight of event.output as Preflight[]) if (!preflight.ready) names[preflight.index] = preflight.result.terminate ? TOOLS.blockTerm : TOOLS.missing;
        break;
      case "turn.executingTools.runningInParallel":
        if (event.type.startsWith("xstate.done.actor.")) names[index] = terminates(event) ? TOOLS.term : TOOLS.ok;
        else names[index] = FAULTY_TOOLS.crash;
        break;
      case "turn.executingTools.runningSequentially":
        if (event.type.startsWith("xstate.done.actor.")) names[index] = terminates(event) ? TOOLS.term : TOOLS.ok;
        else names[index] = FAULTY_TOOLS.crash;
        break;
    }
  }
  return plan;
}

const terminates = (event: unknown) => (event as { output: ToolCallOutput }).output.result.terminate === true;

/** The decisions of one hook, in call order; "none" once they run out. */
function scripted<D extends string>(decisions: readonly D[]): () => D | "none" {
  let n = 0;
  return () => decisions[n++] ?? "none";
}

const thrown = (what: string): never => {
  throw new Error(`${what} failed (scripted)`);
};

/** The runtime configuration that follows `path`: scripted model, hooks and tools. */
export function realize(variant: RunVariant, path: RunPath): Omit<LoopArgs, "coverage"> {
  const plan = planOf(path);
  const { hooks } = variant;
  const convert = scripted(plan.convertToLlm);
  const compact = scripted(plan.compact);
  const config: AgentLoopConfig = {
    model: scriptedModel,
    toolExecution: variant.toolExecution,
    ...(variant.budget ? { budget: variant.budget } : {}),
    ...(hooks.requestLimiter ? { requestLimiter: createRequestLimiter({ maxConcurrent: 1 }) } : {}),
    ...recoveryConfig(variant, async ({ messages }) => {
      const d = compact();
      // A replacement differs from the transcript (a copy of it is nothing to compact, R62).
      return d === "throw" ? thrown("compact") : d === "msg" ? [user("summary of earlier turns"), ...messages] : messages;
    }),
    convertToLlm: (messages) => (convert() === "throw" ? thrown("convertToLlm") : (messages as Message[])),
  };
  if (hooks.getSteeringMessages) {
    const next = scripted(plan.steering);
    config.getSteeringMessages = async () => {
      const d = next();
      return d === "throw" ? thrown("getSteeringMessages") : d === "msg" ? [user("steer")] : [];
    };
  }
  if (hooks.getFollowUpMessages) {
    const next = scripted(plan.followUps);
    config.getFollowUpMessages = async () => {
      const d = next();
      return d === "throw" ? thrown("getFollowUpMessages") : d === "msg" ? [user("follow")] : [];
    };
  }
  // R10: both polls as the Agent's own queues, which say after each steering poll what the path says.
  if (hooks.getSteeringMessages && hooks.getFollowUpMessages) {
    const says = scripted(plan.followUpsEmpty);
    Object.assign(config, ownQueuePolls({ followUpsEmpty: () => says() === "empty", steeringEmpty: () => false }, config.getSteeringMessages!, config.getFollowUpMessages!));
  }
  if (hooks.prepareNextTurn) {
    const next = scripted(plan.prepareNextTurn);
    config.prepareNextTurn = async () => {
      const d = next();
      return d === "throw" ? thrown("prepareNextTurn") : d === "msg" ? { messages: [user("prepared")] } : undefined;
    };
  }
  if (hooks.prepareRequest) {
    const next = scripted(plan.prepareRequest);
    config.prepareRequest = async () => (next() === "throw" ? thrown("prepareRequest") : undefined);
  }
  if (hooks.transformContext) {
    const next = scripted(plan.transformContext);
    config.transformContext = async (messages) => (next() === "throw" ? thrown("transformContext") : messages);
  }
  if (hooks.getApiKey) {
    const next = scripted(plan.getApiKey);
    config.getApiKey = async () => (next() === "throw" ? thrown("getApiKey") : "key");
  }
  if (hooks.finishTurn) {
    const next = scripted(plan.finishTurn);
    config.finishTurn = async () => {
      const d = next();
      if (d === "throw") return thrown("finishTurn");
      return d === "end" || d === "continue" ? { action: d } : undefined;
    };
  }
  if (hooks.beforeToolCall) {
    config.beforeToolCall = async ({ toolCall: call }) => (call.name === TOOLS.blockTerm ? { block: true, reason: "blocked", terminate: true } : undefined);
  }
  if (hooks.afterToolCall) config.afterToolCall = async () => undefined;

  let request = 0;
  const responses: ScriptedResponse[] = plan.responses.map(({ kind, names }) => {
    const turn = request++;
    const calls = names.map((name, i) => toolCall(name, {}, `call_${turn}_${i}`));
    switch (kind) {
      case "throw":
        return { throws: { message: "stream function threw (scripted)" } };
      case "stop":
        return { content: [text("done")] };
      case "error":
        return { content: [text("partial")], stopReason: "error", errorMessage: "provider failed" };
      case "aborted":
        return { content: [text("partial")], stopReason: "aborted", errorMessage: "aborted" };
      case "lengthNoCalls":
        return { content: [text("truncated")], stopReason: "length" };
      // R60, R62: failures before any content (a lone error event).
      case "overloaded":
        return { setupError: "Anthropic API error 529 overloaded_error: Overloaded" };
      case "overflow":
        return { setupError: "Anthropic API error 400 invalid_request_error: prompt is too long: 210000 tokens > 200000 maximum" };
      case "length1":
        return { content: [text("truncated"), ...calls], stopReason: "length" };
      default:
        return { content: [text("calling"), ...calls] };
    }
  });
  const faulty = plan.responses.some((r) => r.names.some((name) => name === FAULTY_TOOLS.crash));
  return {
    prompts: [user("hi")],
    context: { messages: [], tools },
    config,
    streamFn: scriptedStreamFn((_, i) => responses[i] ?? { content: [text("done")] }),
    faulty,
  };
}

export function describePath(path: RunPath): string {
  return path.steps
    .slice(1)
    .map((step, i) => {
      const from = statePath(path.steps[i].state.value).split(".").pop();
      const event = step.event as { type: string; output?: unknown };
      const detail =
        event.type === "step.streamResponse.done"
          ? `(${(event.output as StreamedResponse).message.errorMessage})`
          : event.type === "step.finishTurn.done"
            ? `(${String(event.output)})`
            : event.type.includes("Messages") && event.type.endsWith(".done")
              ? `(${polledMessages(event.output as SteeringPoll).length}${saysFollowUpsEmpty(event.output as SteeringPoll) ? ", no follow-ups" : ""})`
              : event.type.startsWith("xstate.done.actor.")
                ? `(${terminates(event) ? "T" : "F"})`
                : "";
      return `${from}:${eventKind(event).replace("xstate.", "")}${detail}`;
    })
    .join(" → ");
}
