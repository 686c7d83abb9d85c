/** Testing helpers for apps built on the loop. Node-free. */
export {
  createAgentTestModel,
  type AgentTestModel,
  type AgentTestModelOptions,
  type AgentTestPath,
  type AgentTestPathKind,
  type AgentTestRun,
} from "./test-model.js";
