/**
 * `xstate-agent-loop/testing`: helpers for testing apps built on the loop. Node-free.
 * A scripted model (`scriptedStreamFn` with `text`, `thinking`, `toolCall` blocks), a push-based
 * assistant stream for hand-driven providers, and the model-based test generator.
 */
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
} from "../providers/scripted.js";
export { PushAssistantStream, emptyUsage } from "../providers/assistant-stream.js";
export {
  createAgentTestModel,
  AgentTestPlanError,
  type AgentTestModel,
  type AgentTestModelOptions,
  type AgentTestPath,
  type AgentTestPathKind,
  type AgentTestRun,
  type AgentTestRunOptions,
} from "./test-model.js";
