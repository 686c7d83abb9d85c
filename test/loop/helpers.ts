import type { AgentEvent, AgentLoopConfig, AgentMessage, AgentTool, AgentToolResult, Model, ToolResultMessage } from "../../src/index.js";
import type { AssistantMessage, AssistantMessageEvent, RunOptions, Script, ScriptedStreamFn, StreamFn } from "../../src/index.js";
import { runAgentLoop, runAgentLoopContinue, scriptedModel, scriptedStreamFn } from "../../src/index.js";

export const model: Model = scriptedModel;

export const user = (content: string, timestamp = 1): AgentMessage => ({ role: "user", content, timestamp });

export function baseConfig(overrides: Partial<AgentLoopConfig> = {}): AgentLoopConfig {
  return { model, convertToLlm: (messages) => messages as never, ...overrides };
}

export const ok = (text: string, extra: Partial<AgentToolResult> = {}): AgentToolResult => ({
  content: [{ type: "text", text }],
  details: {},
  ...extra,
});

/** A tool whose `execute` is given (default: echoes its name). */
export function tool(name: string, execute?: AgentTool["execute"], extra: Partial<AgentTool> = {}): AgentTool {
  return {
    name,
    label: name,
    description: `The ${name} tool`,
    parameters: { type: "object", properties: {} },
    execute: execute ?? (async () => ok(`${name} done`)),
    ...extra,
  };
}

/** A compact, comparable projection of an event. */
export function project(event: AgentEvent): string {
  switch (event.type) {
    case "message_start":
    case "message_end":
      return `${event.type}:${describe(event.message)}`;
    case "message_update":
      return `message_update:${event.assistantMessageEvent.type}`;
    case "turn_end":
      return `turn_end:${describe(event.message)}+${event.toolResults.length}`;
    case "tool_execution_start":
      return `tool_start:${event.toolName}`;
    case "tool_execution_update":
      return `tool_update:${event.toolName}`;
    case "tool_execution_end":
      return `tool_end:${event.toolName}${event.isError ? "!" : ""}`;
    case "agent_end":
      return `agent_end:${event.messages.length}`;
    default:
      return event.type;
  }
}

export function describe(message: AgentMessage): string {
  const m = message as { role: string; stopReason?: string; content?: unknown; toolName?: string; isError?: boolean };
  if (m.role === "assistant") return `assistant(${m.stopReason})`;
  if (m.role === "toolResult") return `toolResult(${m.toolName}${m.isError ? "!" : ""})`;
  if (m.role === "user") return `user(${typeof m.content === "string" ? m.content : "…"})`;
  return m.role;
}

/** Drops streaming deltas, which most sequence assertions do not care about. */
export const withoutUpdates = (events: AgentEvent[]) => events.filter((e) => e.type !== "message_update");

export function textOf(message: AgentMessage): string {
  const content = (message as { content?: unknown }).content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block: { type: string; text?: string }) => (block.type === "text" ? block.text : "")).join("");
}

// ---------------------------------------------------------------------------------------------
// Scenario helpers shared by the rule suites
// ---------------------------------------------------------------------------------------------

export const system = (content: string, extra: Record<string, unknown> = {}): AgentMessage =>
  ({ role: "system", content, timestamp: 1, ...extra }) as AgentMessage;

/**
 * Records every event as the sink sees it, and a single ordered log in which events (projected at
 * emit time, so later mutation of a partial message cannot change the record) interleave with
 * notes written by hooks, tools and the stream function.
 */
export interface Recorder {
  events: AgentEvent[];
  /** Projected events (no `message_update`) and notes, in the order they happened. */
  log: string[];
  sink: (event: AgentEvent) => void;
  note: (entry: string) => void;
}

export function recorder(): Recorder {
  const events: AgentEvent[] = [];
  const log: string[] = [];
  return {
    events,
    log,
    sink: (event) => {
      events.push(event);
      if (event.type !== "message_update") log.push(logEntry(event));
    },
    note: (entry) => void log.push(entry),
  };
}

/**
 * `project`, except that an assistant `message_start` is written without its stopReason: the
 * streamed partial has no meaningful one yet.
 */
export function logEntry(event: AgentEvent): string {
  if (event.type === "message_start" && (event.message as { role: string }).role === "assistant") return "message_start:assistant";
  return project(event);
}

/** Event entries (no deltas) the way `recorder` logs them. */
export const entries = (events: AgentEvent[]) => withoutUpdates(events).map(logEntry);

/** A hook that writes `hook:NAME` to the log, then does what `body` does. */
export function logged<A extends unknown[], R>(note: (entry: string) => void, name: string, body: (...args: A) => R): (...args: A) => R {
  return (...args: A) => {
    note(`hook:${name}`);
    return body(...args);
  };
}

/** Wraps a stream function so that each request writes `request` to the log first. */
export function loggedStream<F extends (...args: never[]) => unknown>(note: (entry: string) => void, fn: F): F {
  return ((...args: Parameters<F>) => {
    note("request");
    return fn(...args);
  }) as F;
}


/** A message in compact form: role, content text, and the fields that matter to a rule. */
export function summary(message: AgentMessage): string {
  const m = message as { role: string; isError?: boolean; toolsAdded?: { name: string }[]; toolsRemoved?: { name: string }[] };
  const head = describe(message);
  if (m.role === "system") {
    const added = m.toolsAdded ? ` +${m.toolsAdded.map((t) => t.name).join(",")}` : "";
    const removed = m.toolsRemoved ? ` -${m.toolsRemoved.map((t) => t.name).join(",")}` : "";
    return `system(${textOf(message)}${removed}${added})`;
  }
  if (m.role === "toolResult") return `${head}:${textOf(message)}`;
  if (m.role === "assistant") {
    const a = message as { content: { type: string; name?: string; text?: string }[]; errorMessage?: string };
    const parts = a.content.map((b) => (b.type === "toolCall" ? `call ${b.name}` : b.type === "text" ? b.text : b.type));
    return `${head}[${parts.join("|")}]${a.errorMessage ? `:${a.errorMessage}` : ""}`;
  }
  return head;
}

/**
 * Checks the structural invariants every run must keep: one `agent_start` first and one
 * `agent_end` last, turns and messages opened and closed without interleaving, and `agent_end`
 * carrying exactly the messages whose `message_end` was emitted.
 */
export function structureProblems(events: AgentEvent[]): string[] {
  const problems: string[] = [];
  let turnOpen = false;
  let messageOpen = false;
  const ended: AgentMessage[] = [];
  events.forEach((event, i) => {
    if (i === 0 && event.type !== "agent_start") problems.push("first event is not agent_start");
    if (event.type === "agent_end" && i !== events.length - 1) problems.push("agent_end is not last");
    if (event.type === "turn_start") {
      if (turnOpen) problems.push(`#${i}: turn_start inside an open turn`);
      turnOpen = true;
    }
    if (event.type === "turn_end") {
      if (!turnOpen) problems.push(`#${i}: turn_end without turn_start`);
      if (messageOpen) problems.push(`#${i}: turn_end inside an open message`);
      turnOpen = false;
    }
    if (event.type === "message_start") {
      if (messageOpen) problems.push(`#${i}: message_start inside an open message`);
      if (!turnOpen) problems.push(`#${i}: message_start outside a turn`);
      messageOpen = true;
    }
    if (event.type === "message_update" && !messageOpen) problems.push(`#${i}: message_update outside a message`);
    if (event.type === "message_end") {
      if (!messageOpen) problems.push(`#${i}: message_end without message_start`);
      messageOpen = false;
      ended.push(event.message);
    }
  });
  const last = events[events.length - 1];
  if (last?.type !== "agent_end") problems.push("last event is not agent_end");
  else if (events[events.length - 2]?.type !== "turn_end") problems.push("agent_end does not follow turn_end");
  else if (JSON.stringify(last.messages) !== JSON.stringify(ended)) problems.push("agent_end.messages differ from the ended messages");
  return problems;
}

/** A promise with its resolver, for tests that hold a tool or hook open. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** Resolves once `signal` aborts (at once if it already has). */
export const untilAborted = (signal: AbortSignal | undefined) =>
  new Promise<void>((resolve) => {
    if (!signal || signal.aborted) return resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });

/** The text of a tool result (or any content list). */
export const resultText = (result: { content: { type: string; text?: string }[] }) =>
  result.content.map((c) => (c.type === "text" ? c.text : "")).join("");

export const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface Scenario {
  /** Prompts for `runAgentLoop`; `null` runs `runAgentLoopContinue`. Default: `[user("hi")]`. */
  prompts?: AgentMessage[] | null;
  /** The caller's transcript. Default: empty. */
  messages?: AgentMessage[];
  tools?: AgentTool[];
  config?: Partial<AgentLoopConfig>;
  script: Script;
  signal?: AbortSignal;
  options?: RunOptions;
  /** Replaces the scripted model (the script is then unused). */
  streamFn?: StreamFn;
}

export interface ScenarioRun extends Recorder {
  /** What the run resolved with. */
  messages: AgentMessage[];
  stream: ScriptedStreamFn;
}

/**
 * Runs a scenario through `runAgentLoop` (or `runAgentLoopContinue`) with the scripted model;
 * every request is logged as `request`. Pass a recorder to log hook calls in the same sequence.
 */
export async function runScenario(scenario: Scenario, rec: Recorder = recorder()): Promise<ScenarioRun> {
  const stream = scriptedStreamFn(scenario.script);
  const context = { messages: scenario.messages ?? [], ...(scenario.tools ? { tools: scenario.tools } : {}) };
  const config = baseConfig(scenario.config);
  const streamFn = loggedStream(rec.note, scenario.streamFn ?? stream);
  const messages =
    scenario.prompts === null
      ? await runAgentLoopContinue(context, config, rec.sink, scenario.signal, streamFn, scenario.options)
      : await runAgentLoop(scenario.prompts ?? [user("hi")], context, config, rec.sink, scenario.signal, streamFn, scenario.options);
  return { ...rec, messages, stream };
}

/** The tool-result messages of a run, in transcript order. */
export const toolResultsOf = (messages: AgentMessage[]) =>
  messages.filter((m): m is ToolResultMessage => (m as { role: string }).role === "toolResult");

/** An assistant message as the scripted model would build it. */
export function assistantMessage(content: AssistantMessage["content"], stopReason: AssistantMessage["stopReason"] = "stop"): AssistantMessage {
  return {
    role: "assistant",
    content,
    api: scriptedModel.api,
    provider: scriptedModel.provider,
    model: scriptedModel.id,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason,
    timestamp: 7,
  };
}

/**
 * A hand-written provider stream: yields `events`, then throws `throws` if given (breaking the
 * StreamFn contract on purpose, R56), else ends; `result()` resolves to `final`.
 */
export function handStream(events: AssistantMessageEvent[], final: AssistantMessage, throws?: string): StreamFn {
  return () => ({
    async *[Symbol.asyncIterator]() {
      for (const event of events) yield event;
      if (throws !== undefined) throw new Error(throws);
    },
    result: async () => final,
  });
}
