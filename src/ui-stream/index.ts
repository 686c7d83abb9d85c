/**
 * `xstate-agent-loop/ui-stream` (server side, no Node APIs): a route `useChat` of `@ai-sdk/react`
 * talks to, speaking ai@7's UI message stream protocol (docs/guides/react.md has the mapping).
 */
export { toUIMessageStreamResponse, createChatRoute, eventSourceOf, type ChatRoute, type ChatRouteOptions, type UIMessageStreamOptions } from "./route.js";
export { runEventBuffer, type RunEventBuffer, type SequencedEvent, type SequencedEventSource } from "./event-source.js";
export { durableEventSource } from "./durable-source.js";
export { UIStreamEncoder } from "./encoder.js";
export { streamRun, type StreamRunOptions } from "./stream-run.js";
export { uiMessagesOf, type ChatUIMessage, type ChatUIPart } from "./ui-messages.js";
export { UIStreamRequestError, type UIStreamErrorCode } from "./errors.js";
export { UI_MESSAGE_STREAM_HEADERS } from "./sse.js";
export type { UIStreamChunk, AgentPhase, AgentStateData, FinishReason } from "./chunks.js";
export { streamAgentEvents, statusOf, type AgentStreamSession, type AgentStreamRequest } from "./agent-stream.js";
export { toWireEvent, type AgentStreamFrame, type WireAgentEvent, type RemoteSessionStatus } from "./agent-frames.js";
