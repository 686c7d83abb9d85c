/**
 * Random hostile inputs for the library boundary (issue 15): tool results, hook results and
 * prompt messages drawn from valid values, arbitrary values (`fc.anything()`), and values that
 * break naive code: cycles, revoked Proxies, Proxies whose every trap throws, throwing getters and
 * `toJSON`, bigints, symbols, functions. Specs are plain data (fast-check prints them when a
 * case fails); `materialize` builds the hostile value inside the run.
 */
import fc from "fast-check";
import {
  AgentInputError,
  type AssistantMessage,
  type ToolResultMessage,
  runAgentLoop,
  scriptedStreamFn,
  text,
  toolCall,
  type AgentEvent,
  type AgentLoopConfig,
  type AgentMessage,
  type AgentTool,
  type ScriptedResponse,
} from "../../src/index.js";
import { baseConfig, user } from "../loop/helpers.js";

export type HostileSpec =
  | { kind: "anything"; value: unknown }
  | { kind: "revoked" | "trapProxy" | "getter" | "throwingToJSON" | "cycle" | "bigint" | "symbol" | "function" | "nan" | "undefined" };

const anythingArb = fc.record({ kind: fc.constant("anything" as const), value: fc.anything({ maxDepth: 2, maxKeys: 3 }) });

export const hostileArb: fc.Arbitrary<HostileSpec> = fc.oneof(
  anythingArb,
  fc.constantFrom("revoked", "trapProxy", "getter", "throwingToJSON", "cycle", "bigint", "symbol", "function", "nan", "undefined").map((kind) => ({ kind }) as HostileSpec),
);

/** Hostile values that can be read: no revoked or trapping Proxy, no throwing getter or `toJSON`. */
const readableHostileArb: fc.Arbitrary<HostileSpec> = fc.oneof(
  anythingArb,
  fc.constantFrom("cycle", "bigint", "symbol", "function", "nan", "undefined").map((kind) => ({ kind }) as HostileSpec),
);

export function materialize(spec: HostileSpec): unknown {
  switch (spec.kind) {
    case "anything":
      return spec.value;
    case "revoked": {
      const { proxy, revoke } = Proxy.revocable({ content: [] }, {});
      revoke();
      return proxy;
    }
    case "trapProxy": {
      const fail = () => {
        throw new Error("trap");
      };
      return new Proxy({}, { get: fail, has: fail, ownKeys: fail, getOwnPropertyDescriptor: fail, getPrototypeOf: fail });
    }
    case "getter":
      return Object.defineProperty({}, "content", { enumerable: true, get: () => { throw new Error("getter"); } });
    case "throwingToJSON":
      return { toJSON: () => { throw new Error("toJSON"); }, content: [{ type: "text", text: "x" }] };
    case "cycle": {
      const cycle: Record<string, unknown> = { type: "text", text: "x" };
      cycle.self = cycle;
      cycle.content = [cycle];
      return cycle;
    }
    case "bigint":
      return 10n;
    case "symbol":
      return Symbol("s");
    case "function":
      return () => "f";
    case "nan":
      return Number.NaN;
    case "undefined":
      return undefined;
  }
}

type BlockSpec = { kind: "text"; text: string } | { kind: "image" } | { kind: "textOf"; value: HostileSpec } | { kind: "raw"; value: HostileSpec };
const blockArb: fc.Arbitrary<BlockSpec> = fc.oneof(
  fc.record({ kind: fc.constant("text" as const), text: fc.string({ maxLength: 8 }) }),
  fc.constant({ kind: "image" as const }),
  fc.record({ kind: fc.constant("textOf" as const), value: hostileArb }),
  fc.record({ kind: fc.constant("raw" as const), value: hostileArb }),
);
const block = (spec: BlockSpec): unknown =>
  spec.kind === "text"
    ? { type: "text", text: spec.text }
    : spec.kind === "image"
      ? { type: "image", data: "AAAA", mimeType: "image/png" }
      : spec.kind === "textOf"
        ? { type: "text", text: materialize(spec.value) }
        : materialize(spec.value);

export type OutcomeSpec =
  | { kind: "ok" }
  | { kind: "blocks"; blocks: BlockSpec[] }
  | { kind: "details"; details: HostileSpec }
  | { kind: "value"; value: HostileSpec }
  | { kind: "throw"; value: HostileSpec };
const outcomeArb: fc.Arbitrary<OutcomeSpec> = fc.oneof(
  fc.constant({ kind: "ok" as const }),
  fc.record({ kind: fc.constant("blocks" as const), blocks: fc.array(blockArb, { maxLength: 3 }) }),
  fc.record({ kind: fc.constant("details" as const), details: hostileArb }),
  fc.record({ kind: fc.constant("value" as const), value: hostileArb }),
  fc.record({ kind: fc.constant("throw" as const), value: hostileArb }),
);

/** What a hook does: nothing, return a hostile value, return an object with a hostile field, or throw. */
export type HookSpec = { kind: "none" } | { kind: "returns"; value: HostileSpec } | { kind: "field"; field: string; value: HostileSpec } | { kind: "throws"; value: HostileSpec };
const hookArb = (fields: string[], fieldValues: fc.Arbitrary<HostileSpec>): fc.Arbitrary<HookSpec> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant({ kind: "none" as const }) },
    fc.record({ kind: fc.constant("returns" as const), value: hostileArb }),
    fc.record({ kind: fc.constant("field" as const), field: fc.constantFrom(...fields), value: fieldValues }),
    fc.record({ kind: fc.constant("throws" as const), value: hostileArb }),
  );

export interface BoundaryScenario {
  prompts: ({ kind: "user"; text: string } | { kind: "hostile"; value: HostileSpec })[];
  responses: { calls: ("t" | "u")[] }[];
  outcomes: OutcomeSpec[];
  hooks: Record<HookName, HookSpec>;
}

const HOOK_FIELDS = {
  beforeToolCall: ["block", "reason", "terminate"],
  afterToolCall: ["content", "details", "isError", "terminate", "usage"],
  prepareNextTurn: ["context", "messages", "model", "thinkingLevel"],
  prepareRequest: ["context", "model", "thinkingLevel"],
  finishTurn: ["action"],
  getSteeringMessages: ["0"],
  getFollowUpMessages: ["0"],
} as const;
type HookName = keyof typeof HOOK_FIELDS;

/**
 * `wired: false` keeps unreadable values (revoked/trapping Proxies, throwing getters) out of the
 * state-update fields of `prepareNextTurn`/`prepareRequest` (`model`, `context`): until the core
 * checks those results (checkTurnUpdate / checkRequestUpdate), such a model enters the run's
 * context and the run's own failure path throws reading it, so the run never settles.
 */
export const boundaryScenarioArb = ({ wired }: { wired: boolean }): fc.Arbitrary<BoundaryScenario> => fc.record({
  prompts: fc.array(
    fc.oneof(
      { weight: 4, arbitrary: fc.record({ kind: fc.constant("user" as const), text: fc.string({ maxLength: 6 }) }) },
      fc.record({ kind: fc.constant("hostile" as const), value: hostileArb }),
    ),
    { minLength: 1, maxLength: 2 },
  ),
  responses: fc.array(fc.record({ calls: fc.array(fc.constantFrom("t" as const, "u" as const), { maxLength: 3 }) }), { minLength: 1, maxLength: 3 }),
  outcomes: fc.array(outcomeArb, { minLength: 6, maxLength: 6 }),
  hooks: fc.record(
    Object.fromEntries(
      Object.entries(HOOK_FIELDS).map(([name, fields]) => [
        name,
        hookArb([...fields], !wired && (name === "prepareNextTurn" || name === "prepareRequest") ? readableHostileArb : hostileArb),
      ]),
    ) as Record<HookName, fc.Arbitrary<HookSpec>>,
  ),
});

function hookFrom(name: HookName, spec: HookSpec): ((...args: unknown[]) => Promise<unknown>) | undefined {
  if (spec.kind === "none") return undefined;
  let calls = 0;
  return async () => {
    // Queue polls answer once, then nothing, so a run cannot loop on them forever.
    if ((name === "getSteeringMessages" || name === "getFollowUpMessages") && calls++ > 0) return [];
    if (spec.kind === "throws") throw materialize(spec.value);
    if (spec.kind === "returns") return materialize(spec.value);
    if (name === "getSteeringMessages" || name === "getFollowUpMessages") return [materialize(spec.value)];
    return { [spec.field]: materialize(spec.value) };
  };
}

export interface BoundaryRun {
  /** A synchronous throw at the call (bad prompts): must be a typed error. */
  thrownAtCall?: unknown;
  rejection?: unknown;
  events: AgentEvent[];
  messages: AgentMessage[];
}

export async function playBoundary(scenario: BoundaryScenario): Promise<BoundaryRun> {
  let outcomeIndex = 0;
  const execute: AgentTool["execute"] = async () => {
    const outcome = scenario.outcomes[outcomeIndex++ % scenario.outcomes.length];
    switch (outcome.kind) {
      case "ok":
        return { content: [{ type: "text", text: "ok" }], details: {} };
      case "blocks":
        return { content: outcome.blocks.map(block), details: {} } as never;
      case "details":
        return { content: [{ type: "text", text: "ok" }], details: materialize(outcome.details) };
      case "value":
        return materialize(outcome.value) as never;
      case "throw":
        throw materialize(outcome.value);
    }
  };
  const tools: AgentTool[] = ["t", "u"].map((name) => ({ name, label: name, description: name, parameters: { type: "object" }, execute }));
  const responses: ScriptedResponse[] = scenario.responses.map((r, i) => ({ content: [text(`r${i}`), ...r.calls.map((name, j) => toolCall(name, {}, `c${i}_${j}`))] }));
  const config: Partial<AgentLoopConfig> = {};
  for (const [name, spec] of Object.entries(scenario.hooks)) {
    const hook = hookFrom(name as HookName, spec);
    if (hook) (config as Record<string, unknown>)[name] = hook;
  }
  const prompts = scenario.prompts.map((p) => (p.kind === "user" ? user(p.text) : materialize(p.value))) as AgentMessage[];
  const events: AgentEvent[] = [];
  let promise: Promise<AgentMessage[]>;
  try {
    promise = runAgentLoop(prompts, { messages: [], tools }, baseConfig(config), (event) => void events.push(event), undefined, scriptedStreamFn(responses));
  } catch (error) {
    return { thrownAtCall: error, events, messages: [] };
  }
  try {
    return { events, messages: await promise };
  } catch (rejection) {
    // A refusal at the call (bad input) is the promise's rejection, before any event.
    if (rejection instanceof AgentInputError && events.length === 0) return { thrownAtCall: rejection, events, messages: [] };
    return { rejection, events, messages: [] };
  }
}

/** Every boundary invariant a run must keep; empty when it holds. */
export function boundaryProblems(run: BoundaryRun, crashes: unknown[]): string[] {
  const problems: string[] = [];
  if (crashes.length > 0) problems.push(`crashed the host: ${crashes.map((c) => (c instanceof Error ? c.stack : String(c))).join("; ")}`);
  if (run.thrownAtCall !== undefined) {
    if (!(run.thrownAtCall instanceof AgentInputError)) problems.push(`the call threw an untyped error: ${String(run.thrownAtCall)}`);
    if (run.events.length > 0) problems.push("events before a throw at the call");
    return problems;
  }
  if (run.rejection !== undefined) problems.push(`the run rejected: ${String(run.rejection)}`);
  const ends = run.events.filter((e) => e.type === "agent_end").length;
  if (ends !== 1 || run.events.at(-1)?.type !== "agent_end") problems.push(`${ends} agent_end events, last event ${run.events.at(-1)?.type}`);
  const started = new Map<string, number>();
  for (const event of run.events) {
    if (event.type === "tool_execution_start") started.set(event.toolCallId, 0);
    if (event.type === "tool_execution_end") {
      if (!started.has(event.toolCallId)) problems.push(`tool_execution_end of ${event.toolCallId} without a start`);
      else started.set(event.toolCallId, started.get(event.toolCallId)! + 1);
    }
  }
  for (const [id, count] of started) if (count !== 1) problems.push(`${id}: ${count} tool_execution_end events`);
  const results = run.messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
  for (const message of run.messages) {
    if (message.role !== "assistant") continue;
    const assistant = message as AssistantMessage;
    const answered = assistant.stopReason !== "error" && assistant.stopReason !== "aborted";
    for (const block of assistant.content) {
      if (block.type !== "toolCall") continue;
      const count = results.filter((r) => r.toolCallId === block.id).length;
      if (count !== (answered ? 1 : 0)) problems.push(`${block.id} (${assistant.stopReason}): ${count} result messages`);
    }
  }
  return problems;
}

