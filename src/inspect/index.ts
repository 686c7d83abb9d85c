/**
 * `xstate-agent-loop/inspect`: watch runs in the Stately inspector (@statelyai/inspect, the
 * XState v5 inspector), with a sanitizer that is on by default: message histories summarized,
 * tool details truncated, secrets never sent. Node-free.
 *
 * ```ts
 * import { connectWebSocketInspector } from "xstate-agent-loop/inspect";
 * const inspect = connectWebSocketInspector({ url: "ws://localhost:8080" });
 * await runAgentLoop(prompts, context, config, emit, signal, streamFn, { inspect });
 * await inspect.close();
 * ```
 */
export {
  connectWebSocketInspector,
  connectBrowserInspector,
  sanitizingObserver,
  type AgentInspector,
  type AgentWebSocketInspectorOptions,
  type AgentBrowserInspectorOptions,
  type SanitizingOptions,
} from "./inspectors.js";
export {
  sanitizeInspectionEvent,
  sanitizeValue,
  sanitizeContext,
  sanitizeEvent,
  sanitizeSnapshot,
  sanitizeStatelyEvent,
  summarizeMessages,
  redactString,
  REDACTED,
  type SanitizeOptions,
  type MessagesSummary,
  type StatelyWireEvent,
} from "./sanitize.js";
