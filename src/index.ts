/**
 * xstate-agent-loop: the pi agent loop as an explicit XState v5 statechart. This root entry is
 * Node-free (browsers, edge runtimes); Node-only and optional parts live in subpaths
 * (`./anthropic`, `./inspect`, `./node`, `./proxy`, `./restate`, `./testing`).
 */
export * from "./types.js";
export { AgentInputError, HookResultError, ToolResultError } from "./boundary/errors.js";
export { agentLoop, agentLoopContinue, runAgentLoop, runAgentLoopContinue } from "./api/agent-loop.js";
export { setDefaultStreamFn } from "./api/default-stream-fn.js";
export { DEFAULT_AGENT_IDENTITY, mergeIdentity, formatUserAgent } from "./identity/index.js";
export { streamProxy, proxyStreamFn, type ProxyStreamOptions } from "./proxy/client.js";
export type { ProxyAssistantMessageEvent } from "./proxy/wire.js";
export { runToolCall, type RunToolCallOptions } from "./api/run-tool-call.js";
export type { RunOptions, RunActor } from "./api/start-run.js";
export { composeObservers, TraceOrigins, type InspectOption, type InspectObserver, type AttachableObserver, type ObservedRoot } from "./boundary/inspect-observer.js";
export {
  createAgentRunLogic,
  agentEvents,
  type AgentRunInput,
  type AgentRunLogic,
  type AgentEventForward,
} from "./api/run-logic.js";
export type { AgentRunOptions } from "./actors/run-runtime.js";
export type { JobExecutor, JobOutcome, JobBody, WorkerProbe } from "./actors/job-executor.js";
export type { ToolExecutionContext, SubRunRequest } from "./actors/sub-runs.js";
export { RestoreError } from "./loop/restore-error.js";
export { systemClock, systemRandom, type Clock, type RandomSource } from "./loop/clock.js";
export { toPlainData } from "./loop/plain-data.js";
export { isRuntimeEvent } from "./loop/runtime-events.js";
export { createRequestLimiter, type RequestLimiter, type RequestLimiterOptions, type RequestSlotRelease } from "./loop/request-limiter.js";
export { classifyFailure, type FailureClassification } from "./loop/classify-failure.js";
export { AgentEventStream } from "./bridge/event-stream.js";
export { runMachine, type RunEvent } from "../machines/run.machine.js";
export { toolCallMachine, type ToolCallInput, type ToolCallOutput, type ToolCallContext } from "../machines/tool-call.machine.js";
export type { RunInput, RunContext, HookFlags, ToolBatch, TraceOrigin } from "../machines/run.types.js";
export { defineTool, toolDeclaration, validateToolArguments, toolCallHooks } from "./tools/index.js";
export type { ZodToolDefinition, JsonSchemaToolDefinition } from "./tools/index.js";
export type { ToolArgs, ToolCallHooks, TypedToolCallHooks, TypedBeforeToolCallContext, TypedAfterToolCallContext } from "./tools/index.js";
export { replayTranscript, systemMessageFor, declareToolChanges } from "./transcript/index.js";
export {
  summarizingCompactor,
  estimateTokens,
  CompactionError,
  unpairedToolMessages,
  type SummarizingCompactorOptions,
  type CompactionFailure,
  type EstimateTokensOptions,
  type UnpairedToolMessages,
} from "./recovery/index.js";
// Test helpers: their home is `xstate-agent-loop/testing`; re-exported here for compatibility.
export {
  scriptedStreamFn,
  scriptedModel,
  text,
  thinking,
  toolCall,
  pause,
  type ScriptedStreamOptions,
  type ScriptedBlock,
  type ScriptedResponse,
  type ScriptedFailureKind,
  type ScriptedCall,
  type ScriptedStreamFn,
  type Script,
} from "./providers/scripted.js";
export { PushAssistantStream, emptyUsage } from "./providers/assistant-stream.js";
export { Agent, unknownModel, defaultConvertToLlm, type SessionActor } from "./agent/index.js";
export { promptForOutput, OutputError, type OutputOf } from "./agent/index.js";
// R82: per-call approval, for the Agent and for runs driven directly.
export { ApprovalError, approveToolCall, rejectToolCall, pendingApprovalsOf, type ApprovalErrorCode, type DecisionTime } from "./agent/index.js";
export type { AgentState, AgentInitialState, AgentListener, AgentHooks, AgentStreamOptions, AgentOptions, AgentResumeOptions, SubscribeFromOptions } from "./agent/index.js";
export { sessionMachine, type SessionContext, type SessionEvent, type SessionInput, type QueueName } from "../machines/session.machine.js";
export { createAgentTestModel, type AgentTestModel, type AgentTestModelOptions, type AgentTestPath, type AgentTestPathKind, type AgentTestRun } from "./testing/index.js";
// The durable session store's contract and the in-memory store (R80–R84); SQLite: `xstate-agent-loop/sqlite`.
export * from "./store/index.js";
// Durable runs (R80, R81, R83): journal a run or an Agent into a store, resume it, replay it offline.
export * from "./durable/index.js";
