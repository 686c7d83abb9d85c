/**
 * `xstate-agent-loop/react`: React hooks over an Agent (`react` ≥ 18, an optional peer dependency).
 * docs/guides/react.md shows them with the `ui-stream` route.
 */
export { useAgent, useAgentTranscript, useStreamingMessage, useAgentStatus, useAgentActions, type AgentActions, type UseAgentResult } from "./hooks.js";
export { AgentStore, agentStore, frameScheduler, type AgentStatus, type AgentPhase, type StreamingSnapshot, type BatchScheduler, type AgentStoreOptions } from "./agent-store.js";
