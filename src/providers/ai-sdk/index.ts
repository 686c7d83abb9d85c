/**
 * AI SDK models (`xstate-agent-loop/ai-sdk`): a `StreamFn` for any language model object of the AI
 * SDK's v4 specification (the providers of ai@7: `@ai-sdk/openai`, `@ai-sdk/google`, …), with model
 * facts for well-known models. Imports only the types of `@ai-sdk/provider`, so it loads on Node 20
 * and without any AI SDK package installed.
 */
export {
  fromAiSdkModel,
  DEFAULT_AI_SDK_IDLE_TIMEOUT_MS,
  type AiSdkLanguageModel,
  type AiSdkModelOptions,
  type AiSdkStreamFn,
} from "./stream.js";
export { AI_SDK_MODELS, UnknownAiSdkModelError, aiSdkLoopModel, knownModelFacts, providerFamily, type ModelFacts } from "./models.js";
export { buildAiSdkRequest, MISSING_TOOL_RESULT } from "./prompt.js";
export { classifyAiSdkError } from "./classify.js";
