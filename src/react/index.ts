/**
 * `xstate-agent-loop/react`: React hooks over an Agent in the page or a session on the server
 * (`createRemoteAgent`; `react` ≥ 18, an optional peer dependency).
 * docs/guides/react.md shows them with the `ui-stream` route.
 */
export { useAgent, useAgentTranscript, useStreamingMessage, useAgentStatus, useAgentActions, type AgentActions, type UseAgentResult, type AgentHandle } from "./hooks.js";
export { createRemoteAgent, RemoteAgent, RemoteAgentError, type RemoteAgentOptions, type RemoteEventListener } from "./remote-agent.js";
export { AgentStore, agentStore, frameScheduler, type AgentStatus, type AgentPhase, type StreamingSnapshot, type BatchScheduler, type AgentStoreOptions, type StoreSubject } from "./agent-store.js";
