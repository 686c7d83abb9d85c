/**
 * `createAgentTestModel`: a fixed list of plans through the agent loop (not every path of its
 * machine), ready to run against an app's own tools and hooks with the scripted model, so an app
 * can test its hooks on each (tool success,
 * error result, throw, block, termination, truncation, provider error, aborts, steering,
 * follow-ups, `finishTurn` end/continue). Node-free.
 *
 * How a path is realized:
 * - The model is scripted (`scriptedStreamFn`): it calls the path's tool with `arguments[tool]`
 *   (default `{}`), then answers.
 * - Tool outcomes are scripted stubs by default (`execute: "stub"`): the app's tool keeps its name,
 *   schema, `prepareArguments` and execution mode; only `execute` is replaced. With
 *   `execute: "real"`, the success, termination-free and abort paths run the tool's own `execute`.
 * - The app's hooks always run. A path about a hook's decision (block, `finishTurn` end/continue)
 *   overrides that one decision after the app's hook returned; a path about queued messages adds
 *   one steering/follow-up message to what the app's own queue hook returns.
 * - R82: a call that waits for approval (`needsApproval`, a hook's `approval`) is approved, so every
 *   path goes where it says; nobody else would decide, and the run would wait for ever. A tool with
 *   `needsApproval` gets two paths of its own: approved, and rejected. (An app's `onRuntimeEvent`
 *   that decides first is left its decision.)
 * - A path is a fixed plan, not a walk of the machine's graph: what it says can fail to happen (an
 *   app hook blocks every call, arguments that fail validation, a hook that ends the run first).
 *   Each run reports whether its plan was carried out (`realized`, and why not); `run()` rejects with
 *   `AgentTestPlanError` when it was not, unless the test opts out (`{ allowUnrealized: true }`).
 */
import type { AnyActorRef, InspectionEvent, StateValue } from "xstate";
import type {
  AgentEvent,
  AgentLoopConfig,
  AgentMessage,
  AgentTool,
  AgentToolResult,
  Message,
} from "../types.js";
import { runAgentLoop } from "../api/agent-loop.js";
import { ApprovalError, approveToolCall, rejectToolCall } from "../agent/approvals.js";
import { scriptedModel, scriptedStreamFn, text, toolCall, type ScriptedResponse } from "../providers/scripted.js";

export interface AgentTestModelOptions {
  /** The app's tools. Their declarations, schemas, `prepareArguments` and execution modes are used as they are. */
  tools: AgentTool[];
  /**
   * The app's loop configuration: its hooks and options. `model` defaults to the scripted model,
   * `convertToLlm` to passing provider messages through.
   */
  config?: Partial<AgentLoopConfig>;
  /** The arguments the scripted model sends to each tool (default `{}`). Make them valid so calls reach execution. */
  arguments?: Record<string, Record<string, unknown>>;
  /** `"stub"` (default): scripted outcomes. `"real"`: paths where the tool succeeds run its own `execute`. */
  execute?: "stub" | "real";
  /** The prompt of every run (default `"Test prompt"`). */
  prompt?: string;
  /** The transcript before the run (default empty). */
  messages?: AgentMessage[];
}

export type AgentTestPathKind =
  | "answer"
  | "tool-success"
  | "tool-error-result"
  | "tool-throws"
  | "tool-blocked"
  | "tool-terminates"
  | "truncated"
  | "provider-error"
  | "abort-while-streaming"
  | "abort-while-tool-runs"
  | "steering"
  | "follow-up"
  | "finish-turn-end"
  | "finish-turn-continue"
  | "parallel-batch"
  | "tool-approved"
  | "tool-rejected";

export interface AgentTestRun {
  /** Every event, in order. */
  events: AgentEvent[];
  /** What the run resolved with: the messages it added. */
  messages: AgentMessage[];
  /** The run machine's states in visit order, as dotted paths (`"turn.requesting.streaming"`). */
  states: string[];
  /** Whether the path's plan was carried out: what its description says happened (the tool ran, the block applied, …). */
  realized: boolean;
  /** When it was not: why (`"read_file never ran: its call ended \"Validation failed …\""`). */
  unrealized?: string;
}

/** Options of one path's run. */
export interface AgentTestRunOptions {
  /** Resolve even when the plan was not carried out (then `realized` is false). Default: reject with `AgentTestPlanError`. */
  allowUnrealized?: boolean;
}

/** A path whose plan was not carried out (`plan not carried out: <why>`): the run did not test what the path says. */
export class AgentTestPlanError extends Error {
  constructor(
    readonly path: string,
    readonly run: AgentTestRun,
  ) {
    super(`plan not carried out: ${path}: ${run.unrealized}`);
    this.name = "AgentTestPlanError";
  }
}

export interface AgentTestPath {
  /** What happens on this path, e.g. `"read_file throws"`. */
  description: string;
  kind: AgentTestPathKind;
  /** The tool this path is about, if any. */
  tool?: string;
  /**
   * Plays the path: a fresh run every call. Rejects with `AgentTestPlanError` when the plan was not
   * carried out (unless `allowUnrealized`), and when an app hook breaks the event sink.
   */
  run(options?: AgentTestRunOptions): Promise<AgentTestRun>;
}

export interface AgentTestModel {
  paths: AgentTestPath[];
}

/** Requests per run at most: an app hook that always says `continue` still ends. */
const MAX_REQUESTS = 10;

type Outcome = "success" | "error-result" | "throws" | "terminates" | "abort";

interface PathPlan {
  kind: AgentTestPathKind;
  description: string;
  tool?: string;
  /** Tool calls of the first response (names), and what their stubs do. */
  calls: string[];
  outcome?: Outcome;
  stopReason?: "length" | "error";
  abortWhileStreaming?: boolean;
  block?: boolean;
  finishTurn?: "end" | "continue";
  steering?: boolean;
  followUp?: boolean;
  /** R82: reject the path's calls that wait for approval (every other request is approved). */
  reject?: boolean;
  /** The call waits for approval and is approved (the plan is carried out only if it waited). */
  approve?: boolean;
}

export function createAgentTestModel(options: AgentTestModelOptions): AgentTestModel {
  const tools = options.tools ?? [];
  const plans: PathPlan[] = [
    { kind: "answer", description: "the model answers without calling a tool", calls: [] },
    { kind: "provider-error", description: "the request fails (provider error response)", calls: [], stopReason: "error" },
    { kind: "abort-while-streaming", description: "the run is aborted while the response streams", calls: [], abortWhileStreaming: true },
    { kind: "steering", description: "a steering message arrives after the first turn", calls: [], steering: true },
    { kind: "follow-up", description: "a follow-up message arrives when the run would end", calls: [], followUp: true },
    { kind: "finish-turn-continue", description: "finishTurn asks for one more request after the answer", calls: [], finishTurn: "continue" },
  ];
  for (const tool of tools) {
    const name = tool.name;
    const one = (plan: Omit<PathPlan, "tool" | "calls">): PathPlan => ({ ...plan, tool: name, calls: [name] });
    plans.push(
      one({ kind: "tool-success", description: `${name} succeeds`, outcome: "success" }),
      one({ kind: "tool-error-result", description: `${name} returns an error result`, outcome: "error-result" }),
      one({ kind: "tool-throws", description: `${name} throws`, outcome: "throws" }),
      one({ kind: "tool-blocked", description: `beforeToolCall blocks ${name}`, outcome: "success", block: true }),
      one({ kind: "tool-terminates", description: `${name}'s result terminates the batch`, outcome: "terminates" }),
      one({ kind: "truncated", description: `the response calling ${name} is truncated (token limit)`, outcome: "success", stopReason: "length" }),
      one({ kind: "abort-while-tool-runs", description: `the run is aborted while ${name} runs`, outcome: "abort" }),
      one({ kind: "steering", description: `a steering message arrives during ${name}'s turn`, outcome: "success", steering: true }),
      one({ kind: "finish-turn-end", description: `finishTurn ends the run after ${name}`, outcome: "success", finishTurn: "end" }),
    );
    if (tool.needsApproval !== undefined && tool.needsApproval !== false) {
      plans.push(
        one({ kind: "tool-approved", description: `${name} waits for approval and is approved`, outcome: "success", approve: true }),
        one({ kind: "tool-rejected", description: `${name} waits for approval and is rejected`, outcome: "success", reject: true }),
      );
    }
  }
  if (tools.length > 1) {
    const names = tools.map((tool) => tool.name);
    plans.push({ kind: "parallel-batch", description: `one batch calls ${names.join(", ")}`, calls: names, outcome: "success" });
  }
  return {
    paths: plans.map((plan) => ({
      description: plan.description,
      kind: plan.kind,
      ...(plan.tool ? { tool: plan.tool } : {}),
      run: async (runOptions?: AgentTestRunOptions) => {
        const run = await runPath(options, plan);
        if (!run.realized && !runOptions?.allowUnrealized) throw new AgentTestPlanError(plan.description, run);
        return run;
      },
    })),
  };
}

const textResult = (value: string, extra: Partial<AgentToolResult> = {}): AgentToolResult => ({ content: [{ type: "text", text: value }], details: {}, ...extra });

const untilAborted = (signal: AbortSignal | undefined) =>
  new Promise<void>((resolve) => {
    if (!signal || signal.aborted) return resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });

const userMessage = (content: string): AgentMessage => ({ role: "user", content, timestamp: Date.now() });

async function runPath(options: AgentTestModelOptions, plan: PathPlan): Promise<AgentTestRun> {
  const app = options.config ?? {};
  const controller = new AbortController();
  const callIds = plan.calls.map((name, i) => `test_call_${i}_${name}`);
  // What of the plan happened, for `realized`.
  const seen = { requested: false, executed: new Set<string>(), blocked: false, finished: false, steered: false, followedUp: false, abortedStreaming: false, rejected: false, approved: false };

  // Tools: the app's, with `execute` replaced by the path's outcome (or kept, with execute "real").
  const tools = options.tools.map((tool): AgentTool => {
    if (!plan.calls.includes(tool.name)) return tool;
    const real = options.execute === "real";
    const execute: AgentTool["execute"] = async (id, params, signal, onUpdate, context) => {
      seen.executed.add(tool.name);
      switch (plan.outcome) {
        case "error-result":
          return textResult(`${tool.name} failed (test model)`, { isError: true });
        case "throws":
          throw new Error(`${tool.name} threw (test model)`);
        case "terminates":
          return textResult(`${tool.name} done (test model)`, { terminate: true });
        case "abort": {
          controller.abort();
          if (real) return tool.execute(id, params, signal, onUpdate, context);
          await untilAborted(signal);
          throw new Error(`${tool.name} was aborted (test model)`);
        }
        default:
          return real ? tool.execute(id, params, signal, onUpdate, context) : textResult(`${tool.name} done (test model)`);
      }
    };
    return { ...tool, execute };
  });

  const config: AgentLoopConfig = {
    ...app,
    model: app.model ?? scriptedModel,
    convertToLlm: app.convertToLlm ?? ((messages: AgentMessage[]) => messages as Message[]),
  };
  if (plan.block) {
    config.beforeToolCall = async (context, signal) => {
      const decision = await app.beforeToolCall?.(context, signal);
      if (!callIds.includes(context.toolCall.id)) return decision;
      seen.blocked = true;
      return { block: true, reason: "Blocked (test model)" };
    };
  }
  if (plan.finishTurn) {
    let turns = 0;
    const forced = plan.finishTurn;
    config.finishTurn = async (turn, signal) => {
      const decision = await app.finishTurn?.(turn, signal);
      if (turns++ !== 0) return decision;
      seen.finished = true;
      return { action: forced };
    };
  }
  if (plan.steering) {
    let polls = 0;
    // Polled at run start, then after each turn: the message arrives at the second poll.
    config.getSteeringMessages = async () => {
      const own = (await app.getSteeringMessages?.()) ?? [];
      if (++polls !== 2) return own;
      seen.steered = true;
      return own.concat(userMessage("Steering message (test model)"));
    };
  }
  if (plan.followUp) {
    let polls = 0;
    config.getFollowUpMessages = async () => {
      const own = (await app.getFollowUpMessages?.()) ?? [];
      if (++polls !== 1) return own;
      seen.followedUp = true;
      return own.concat(userMessage("Follow-up message (test model)"));
    };
  }

  const first: ScriptedResponse = {
    content: [
      text(plan.abortWhileStreaming ? "This answer is interrupted" : plan.calls.length > 0 ? "Calling tools." : "Answer."),
      ...plan.calls.map((name, i) => toolCall(name, options.arguments?.[name] ?? {}, callIds[i])),
    ],
    ...(plan.stopReason ? { stopReason: plan.stopReason } : {}),
    ...(plan.stopReason === "error" ? { errorMessage: "Provider error (test model)" } : {}),
  };
  const streamFn = scriptedStreamFn((_, index) => {
    if (index === 0) {
      seen.requested = true;
      return first;
    }
    if (index >= MAX_REQUESTS) return { stopReason: "error", errorMessage: `Test model: more than ${MAX_REQUESTS} requests` };
    return { content: [text("Done.")] };
  });

  // R82: every call that waits for approval is decided here (approved, or rejected on a reject path).
  let run: AnyActorRef | undefined;
  config.onRuntimeEvent = async (event) => {
    await app.onRuntimeEvent?.(event);
    if (event.type !== "tool_approval_requested" || !run) return;
    try {
      if (plan.reject && callIds.includes(event.toolCallId)) {
        rejectToolCall(run, event.approvalId, "Rejected (test model)");
        seen.rejected = true;
      } else {
        approveToolCall(run, event.approvalId);
        if (callIds.includes(event.toolCallId)) seen.approved = true;
      }
    } catch (error) {
      // The app's own listener decided already.
      if (!(error instanceof ApprovalError)) throw error;
    }
  };

  const events: AgentEvent[] = [];
  const states: string[] = [];
  const visit = (path: string) => {
    if (states[states.length - 1] !== path) states.push(path);
  };
  const inspect = (event: InspectionEvent) => {
    // The run actor is the root of its system; tool-call actors and the step worker are children.
    if (event.type !== "@xstate.microstep" || (event.actorRef as AnyActorRef).sessionId !== event.rootId) return;
    for (const transition of event._transitions) visit(transition.source.id.split(".").slice(1).join("."));
    visit(statePath((event.snapshot as unknown as { value: StateValue }).value));
  };
  const sink = (event: AgentEvent) => {
    events.push(event);
    if (plan.abortWhileStreaming && event.type === "message_update" && !controller.signal.aborted) {
      seen.abortedStreaming = true;
      controller.abort();
    }
  };
  const messages = await runAgentLoop(
    [userMessage(options.prompt ?? "Test prompt")],
    { messages: options.messages ?? [], tools },
    config,
    sink,
    controller.signal,
    streamFn,
    { inspect, onActor: (actor) => void (run = actor) },
  );
  const unrealized = whyNotRealized(plan, seen, events);
  return { events, messages, states, realized: unrealized === undefined, ...(unrealized ? { unrealized } : {}) };
}

interface Seen {
  requested: boolean;
  executed: Set<string>;
  blocked: boolean;
  finished: boolean;
  steered: boolean;
  followedUp: boolean;
  abortedStreaming: boolean;
  rejected: boolean;
  approved: boolean;
}

/** Why the plan was not carried out, or undefined when everything it says happened. */
function whyNotRealized(plan: PathPlan, seen: Seen, events: AgentEvent[]): string | undefined {
  if (!seen.requested) return "the model was never asked (a hook ended the run first)";
  if (plan.abortWhileStreaming && !seen.abortedStreaming) return "the response never streamed, so nothing was aborted";
  // A truncated response's calls are not run (R28), a blocked or rejected call never runs: those plans need only their decision.
  if (plan.block) return seen.blocked ? undefined : `beforeToolCall was never asked about ${plan.tool}${endedAs(plan.tool, events)}`;
  if (plan.reject) return seen.rejected ? undefined : `${plan.tool} never waited for approval${endedAs(plan.tool, events)}`;
  if (plan.approve && !seen.approved) return `${plan.tool} never waited for approval${endedAs(plan.tool, events)}`;
  if (plan.stopReason !== "length") {
    const missing = plan.calls.find((name) => !seen.executed.has(name));
    if (missing) return `${missing} never ran${endedAs(missing, events)}`;
  }
  if (plan.steering && !seen.steered) return "the run ended before the steering message was polled";
  if (plan.followUp && !seen.followedUp) return "the run ended before follow-up messages were polled";
  if (plan.finishTurn && !seen.finished) return "finishTurn was never asked";
  return undefined;
}

/** `: its call ended "…"`, from the call's `tool_execution_end`, if it had one. */
function endedAs(tool: string | undefined, events: AgentEvent[]): string {
  const end = events.find((event): event is Extract<AgentEvent, { type: "tool_execution_end" }> => event.type === "tool_execution_end" && event.toolName === tool);
  if (!end) return "";
  const text = (end.result as AgentToolResult).content.map((block) => (block.type === "text" ? block.text : "")).join("");
  return `: its call ended ${JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text)}`;
}

function statePath(value: StateValue): string {
  if (typeof value === "string") return value;
  const [key, child] = Object.entries(value)[0];
  return child && (typeof child === "string" || Object.keys(child).length > 0) ? `${key}.${statePath(child)}` : key;
}
