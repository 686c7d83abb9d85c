/**
 * xstate-agent-loop: the pi agent loop as an explicit XState v5 statechart. This root entry is
 * Node-free (browsers, edge runtimes); Node-only and optional parts live in subpaths
 * (`./anthropic`, `./inspect`, `./node`).
 */
export * from "./types.js";
export { AgentInputError, HookResultError, ToolResultError } from "./boundary/errors.js";
export { agentLoop, agentLoopContinue, runAgentLoop, runAgentLoopContinue } from "./api/agent-loop.js";
export { runToolCall, type RunToolCallOptions } from "./api/run-tool-call.js";
export type { RunOptions, RunActor } from "./api/start-run.js";
export { AgentEventStream } from "./bridge/event-stream.js";
export { runMachine, type TurnSnapshot, type StateUpdate, type TurnUpdate, type RunEvent } from "../machines/run.machine.js";
export { toolCallMachine, type ToolCallInput, type ToolCallOutput, type ToolCallContext } from "../machines/tool-call.machine.js";
export { createRunImplementations, createToolCallImplementations } from "./actors/implementations.js";
export type { RunDeps } from "./actors/run-deps.js";
export type { RunInput, RunContext, HookFlags, ToolBatch } from "./loop/run-context.js";
export { defineTool, toolDeclaration, validateToolArguments } from "./tools/index.js";
export type { ZodToolDefinition, JsonSchemaToolDefinition } from "./tools/index.js";
export { replayTranscript, systemMessageFor, declareToolChanges } from "./transcript/index.js";
export {
  scriptedStreamFn,
  scriptedModel,
  text,
  thinking,
  toolCall,
  type ScriptedBlock,
  type ScriptedResponse,
  type ScriptedCall,
  type ScriptedStreamFn,
  type Script,
} from "./providers/scripted.js";
export { PushAssistantStream, emptyUsage } from "./providers/assistant-stream.js";
export { Agent, unknownModel, defaultConvertToLlm, type SessionActor } from "./agent/index.js";
export type { AgentState, AgentInitialState, AgentListener, AgentHooks, AgentStreamOptions, AgentOptions } from "./agent/index.js";
export { sessionMachine, type SessionContext, type SessionEvent, type SessionInput, type QueueName } from "../machines/session.machine.js";
export { createAgentTestModel, type AgentTestModel, type AgentTestModelOptions, type AgentTestPath, type AgentTestPathKind, type AgentTestRun } from "./testing/index.js";
