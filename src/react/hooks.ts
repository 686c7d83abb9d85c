/**
 * React hooks over an Agent in the page, or a session on the server through `createRemoteAgent`
 * (`react` is an optional peer dependency). Each hook reads
 * one slice of the Agent's store, so a text delta re-renders the streaming message's readers only
 * (once per animation frame), never the transcript's.
 */
import { useMemo, useSyncExternalStore } from "react";
import type { Agent } from "../agent/agent.js";
import { RemoteAgent } from "./remote-agent.js";
import type { ApproveOptions } from "../types.js";
import type { AgentMessage } from "../protocol/messages.js";
import { agentStore, type AgentStatus, type AgentStoreOptions, type StreamingSnapshot } from "./agent-store.js";

/** An Agent in the page, or a session on the server (`createRemoteAgent`): the hooks read both alike. */
export type AgentHandle = Agent | RemoteAgent;

/** The transcript: changes when a message ends (and when a run ends or the transcript is compacted). */
export function useAgentTranscript(agent: AgentHandle, options?: AgentStoreOptions): readonly AgentMessage[] {
  const store = agentStore(agent, options);
  return useSyncExternalStore(store.subscribeTranscript, store.getTranscript, store.getTranscript);
}

/** The message streaming now: changes at most once per batch of deltas. */
export function useStreamingMessage(agent: AgentHandle, options?: AgentStoreOptions): StreamingSnapshot {
  const store = agentStore(agent, options);
  return useSyncExternalStore(store.subscribeStreaming, store.getStreaming, store.getStreaming);
}

/** Phase, pending approvals, queues, last end reason, usage. */
export function useAgentStatus(agent: AgentHandle, options?: AgentStoreOptions): AgentStatus {
  const store = agentStore(agent, options);
  return useSyncExternalStore(store.subscribeStatus, store.getStatus, store.getStatus);
}

const userMessage = (input: string | AgentMessage): AgentMessage => (typeof input === "string" ? { role: "user", content: [{ type: "text", text: input }], timestamp: Date.now() } : input);

export interface AgentActions {
  /** Starts a run; while one goes, the text is steered into it instead (R53: queued, not a second run). */
  prompt(text: string): Promise<void>;
  steer(message: string | AgentMessage): void;
  followUp(message: string | AgentMessage): void;
  abort(): void;
  approve(approvalId: string, options?: ApproveOptions): void;
  reject(approvalId: string, reason: string): void;
  /** R81: continues the stored session (an Agent with `durable`). */
  resume(): Promise<boolean>;
}

/** Stable action callbacks for `agent` (they never cause a render). */
export function useAgentActions(agent: AgentHandle, options?: AgentStoreOptions): AgentActions {
  return useMemo(() => {
    const store = agentStore(agent, options);
    if (agent instanceof RemoteAgent) return remoteActions(agent);
    // Queue changes emit no event: the status is read again after each action that makes one.
    const queued = (action: () => void) => {
      action();
      store.refreshStatus();
    };
    return {
      prompt: async (text) => {
        if (agent.state.isStreaming) return queued(() => agent.steer(userMessage(text)));
        return agent.prompt(text);
      },
      steer: (message) => queued(() => agent.steer(userMessage(message))),
      followUp: (message) => queued(() => agent.followUp(userMessage(message))),
      abort: () => agent.abort(),
      approve: (approvalId, approveOptions) => queued(() => agent.approve(approvalId, approveOptions)),
      reject: (approvalId, reason) => queued(() => agent.reject(approvalId, reason)),
      resume: () => agent.resume(),
    };
    // options is read at the first render: a later `schedule` reaches the store through the readers.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [agent]);
}

/** A remote session's actions are posts: a refusal (an unknown approval, no run to steer) goes to its `onError`. */
function remoteActions(remote: RemoteAgent): AgentActions {
  const report = <T>(promise: Promise<T>): Promise<T> => promise.catch((error: unknown) => (remote.reportError(error), undefined as T));
  return {
    prompt: (text) => report(remote.prompt(text)),
    steer: (message) => void report(remote.steer(message)),
    followUp: (message) => void report(remote.followUp(message)),
    abort: () => void report(remote.abort()),
    approve: (approvalId, approveOptions) => void report(remote.approve(approvalId, approveOptions)),
    reject: (approvalId, reason) => void report(remote.reject(approvalId, reason)),
    resume: () => report(remote.resume()).then((resumed) => resumed === true),
  };
}

export interface UseAgentResult extends AgentActions {
  transcript: readonly AgentMessage[];
  streamingMessage: AgentMessage | undefined;
  /** The session's phase (`state.value`) and the rest of its status. */
  state: AgentStatus;
}

/**
 * Everything at once, for small components. It re-renders on every change it returns (deltas
 * included, batched per frame): split a chat into `useAgentTranscript`, `useStreamingMessage` and
 * `useAgentStatus` readers to keep the transcript still while a message streams.
 */
export function useAgent(agent: AgentHandle, options?: AgentStoreOptions): UseAgentResult {
  const transcript = useAgentTranscript(agent, options);
  const streaming = useStreamingMessage(agent, options);
  const state = useAgentStatus(agent, options);
  const actions = useAgentActions(agent, options);
  return { ...actions, transcript, streamingMessage: streaming.message, state };
}
