/**
 * The Anthropic provider (`xstate-agent-loop/anthropic`): a `StreamFn` over `@anthropic-ai/sdk` and
 * `Model`s for current Claude models. The only place the SDK is imported.
 */
export {
  anthropicStreamFn,
  DEFAULT_IDLE_TIMEOUT_MS,
  type AnthropicStreamFn,
  type AnthropicStreamFnOptions,
} from "./stream.js";
export {
  anthropicModel,
  isKnownAnthropicModel,
  UnknownAnthropicModelError,
  ANTHROPIC_MODELS,
  ANTHROPIC_PRICES,
  ANTHROPIC_BASE_URL,
  type AnthropicPrice,
  type AnthropicModelOptions,
} from "./models.js";
export { THINKING_BUDGETS } from "./request.js";
