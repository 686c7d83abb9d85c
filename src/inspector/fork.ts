/**
 * Time travel: a fork of a durable session from one of its persisted points (fork-points.ts). The
 * original session's records up to the point are copied into a NEW session of the same store (the
 * original is only read), and the app's runner resumes that session (R81: the run restored at the
 * point, R13) with its own implementations, given here:
 *
 * - a stream function whose first request answers with the user's edit of the recorded response,
 *   then the app's model (or, without one, the responses the recording holds after the point);
 * - the app's tools, each that is not `replay: "safe"` waiting for an approval in the page before
 *   it runs (a fork must not repeat a side effect unasked).
 */
import type { AgentOptions } from "../agent/types.js";
import { Agent } from "../agent/agent.js";
import type { AttachableObserver } from "../boundary/inspect-observer.js";
import type { DurableOptions } from "../durable/durable-run.js";
import type { AgentTool, StreamFn, ToolApprovalRequest } from "../types.js";
import type { RunStore } from "../store/run-store.js";
import { scriptedStreamFn, type ScriptedBlock, type ScriptedResponse } from "../providers/scripted.js";
import { forkPoints, recordedResponsesAfter, type ForkPoint } from "./fork-points.js";

/** The user's edit of the response that follows the point (the page's text box). */
export interface ForkEdit {
  /** The response's new text. */
  text: string;
  /** Keep the recorded response's tool calls after the text (default true). */
  keepCalls?: boolean;
}

export type ApprovalDecision = { approve: true } | { approve: false; reason: string };

/** What a fork's runner is given: the new session, and the implementations' wrappers. */
export interface ForkContext {
  /** The fork's session id: in the store and in the page. */
  sessionId: string;
  durable: DurableOptions;
  point: ForkPoint;
  /** The stream function the fork runs with: the edited response first, then `base` (default: the recording's later responses; a `paidModel` base asks first). */
  streamFn(base?: StreamFn): StreamFn;
  /** The app's tools, each that is not replay-safe (and does not ask already, R82) waiting for the page's approval. */
  tools(tools: readonly AgentTool[]): AgentTool[];
  /** Pass as `inspect`: the fork is watched beside the original. */
  inspect: AttachableObserver;
  /** An R82 approval the fork waits for: the page asks; `decide` gets the answer. */
  askApproval(request: ToolApprovalRequest, decide: (decision: ApprovalDecision) => void): void;
}

/** A durable session the page can fork, and how a fork runs (the app's implementations). */
export interface ForkSource {
  store: RunStore;
  /** The original session (in the store, and as the page lists it). */
  sessionId: string;
  /** Runs the fork to its end (e.g. `agentForkRunner`). */
  run(fork: ForkContext): Promise<void>;
  /**
   * Set when a fork calls a paid model (the runner's own `base` stream function): the fork's first
   * request to it waits for a confirmation in the page (an approval of "paid model").
   */
  paidModel?: string;
}

/** Why a fork could not start (unknown session or point, malformed edit): the page's 400. */
export class ForkError extends Error {
  override name = "ForkError";
}

/**
 * The points of a source's session: none while the store does not hold it yet (the CLI makes its
 * session forkable before the first prompt writes it, and the page asks at once).
 */
export const pointsOf = (source: ForkSource): ForkPoint[] =>
  source.store.hasSession(source.sessionId) ? forkPoints(source.store.readSession(source.sessionId).records()) : [];

/** Copies the original's records through `seq` into the new session `forkId`; the original is only read. */
export function seedFork(store: RunStore, from: string, seq: number, forkId: string): void {
  if (store.hasSession(forkId)) throw new ForkError(`session ${forkId} exists already`);
  const records = store.readSession(from).records().filter((entry) => entry.seq <= seq);
  const writer = store.openSession(forkId, { meta: { forkOf: from, atSeq: seq } });
  try {
    for (const entry of records) writer.append(entry.record);
  } finally {
    writer.release();
  }
}

/** The edited response: the new text, then (unless dropped) the recorded calls. */
export function editedResponse(point: ForkPoint, edit: ForkEdit): ScriptedResponse {
  const calls: ScriptedBlock[] = edit.keepCalls === false ? [] : (point.beforeResponse?.calls ?? []).map((call) => ({ type: "toolCall", ...call }));
  return { content: [...(edit.text ? [{ type: "text" as const, text: edit.text }] : []), ...calls] };
}

/** The first request gets `first` (when set), every later one goes to `then`. */
export function forkStreamFn(first: ScriptedResponse | undefined, then: StreamFn): StreamFn {
  let edited = first ? scriptedStreamFn([first]) : undefined;
  return (model, context, options) => {
    const fn = edited ?? then;
    edited = undefined;
    return fn(model, context, options);
  };
}

/**
 * A paid model's stream function that waits for a confirmation before its first request (a fork
 * says so before it spends money); a refusal answers that request and every later one with an
 * error response, so the paid model is never called.
 */
export function confirmedStreamFn(base: StreamFn, confirm: () => Promise<ApprovalDecision>): StreamFn {
  let decision: Promise<ApprovalDecision> | undefined;
  return async (model, context, options) => {
    const answer = await (decision ??= confirm());
    if (!answer.approve) return scriptedStreamFn([{ stopReason: "error", errorMessage: `Not sent to the paid model: ${answer.reason}` }])(model, context, options);
    return base(model, context, options);
  };
}

/** A stand-in model for a recording: its responses after the point, in order (`skip`: those an edit replaced). */
export function recordingStreamFn(source: ForkSource, seq: number, skip = 0): StreamFn {
  const responses = recordedResponsesAfter(source.store.readSession(source.sessionId).records(), seq).slice(skip);
  return scriptedStreamFn((_call, index) => responses[index] ?? { stopReason: "error", errorMessage: "The recording holds no further response for this fork." });
}

/**
 * A tool that waits for the page's approval before each execution (a fork's side effect is not
 * repeated unasked); a rejection is the call's error result.
 */
export function gatedTool(tool: AgentTool, ask: (toolCallId: string, args: unknown) => Promise<ApprovalDecision>): AgentTool {
  return {
    ...tool,
    execute: async (toolCallId, params, signal, onUpdate, context) => {
      const decision = await ask(toolCallId, params);
      if (!decision.approve) throw new Error(`Rejected in the inspector: ${decision.reason}`);
      return tool.execute(toolCallId, params, signal, onUpdate, context);
    },
  };
}

/**
 * A runner for an Agent app (the CLI's): an Agent over the fork's session with the app's options
 * (tools, model, settings), the fork's stream function and tools, resumed to the run's end. Its
 * R82 approvals are asked in the page.
 */
export function agentForkRunner(options: () => AgentOptions): ForkSource["run"] {
  return async (fork) => {
    const base = options();
    const agent = new Agent({
      ...base,
      initialState: { ...base.initialState, tools: fork.tools(base.initialState?.tools ?? []) },
      streamFn: fork.streamFn(base.streamFn),
      durable: fork.durable,
      inspect: fork.inspect,
    });
    const ask = (request: ToolApprovalRequest) =>
      fork.askApproval(request, (decision) => (decision.approve ? agent.approve(request.approvalId) : agent.reject(request.approvalId, decision.reason)));
    agent.subscribe(
      (event) => {
        if (event.type === "tool_approval_requested") ask(event);
      },
      { runtimeEvents: true },
    );
    try {
      // A call left waiting at the point is in the state, not in a new event (R82).
      await agent.resume({ onLive: () => queueMicrotask(() => agent.pendingApprovals.forEach(ask)) });
    } finally {
      agent.release();
    }
  };
}
