/**
 * `--model provider:id`: which provider and model the session talks to. A bare id (and
 * `anthropic:id`) is a Claude model through the native adapter; `openai:`, `openai-chat:`,
 * `ollama:` and `google:` go through the AI SDK's provider packages, which are optional installs
 * loaded only when named. Keys come from each provider's usual environment variable.
 */
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { fromAiSdkModel, knownModelFacts, type ModelFacts } from "../../providers/ai-sdk/index.js";
import type { CliOptions } from "./args.js";
import { chooseModel, type ModelChoice } from "./model.js";

export type ProviderName = "anthropic" | "openai" | "openai-chat" | "ollama" | "google";

interface ProviderSpec {
  /** The npm package the provider needs. */
  packageName: string;
  /** The environment variable with its key (none for a local server). */
  keyVariable?: string;
  /** The environment variable with its base URL. */
  baseUrlVariable?: string;
  defaultBaseUrl?: string;
  label: string;
  /** The language model of `id` from the package's factory. */
  create(module: Record<string, unknown>, settings: { apiKey: string; baseURL?: string }, id: string): LanguageModelV4;
}

type Factory<T> = (settings: { apiKey: string; baseURL?: string }) => T;
type OpenAIProvider = { responses(id: string): LanguageModelV4; chat(id: string): LanguageModelV4 };
type GoogleProvider = (id: string) => LanguageModelV4;

const PROVIDERS: Readonly<Record<Exclude<ProviderName, "anthropic">, ProviderSpec>> = {
  openai: {
    packageName: "@ai-sdk/openai",
    keyVariable: "OPENAI_API_KEY",
    baseUrlVariable: "OPENAI_BASE_URL",
    label: "OpenAI Responses API",
    create: (module, settings, id) => (module.createOpenAI as Factory<OpenAIProvider>)(settings).responses(id),
  },
  "openai-chat": {
    packageName: "@ai-sdk/openai",
    keyVariable: "OPENAI_API_KEY",
    baseUrlVariable: "OPENAI_BASE_URL",
    label: "OpenAI Chat Completions",
    create: (module, settings, id) => (module.createOpenAI as Factory<OpenAIProvider>)(settings).chat(id),
  },
  // Ollama (and vLLM, LM Studio, …) speak Chat Completions; a local server wants no key.
  ollama: {
    packageName: "@ai-sdk/openai",
    baseUrlVariable: "OLLAMA_BASE_URL",
    defaultBaseUrl: "http://localhost:11434/v1",
    label: "Ollama",
    create: (module, settings, id) => (module.createOpenAI as Factory<OpenAIProvider>)(settings).chat(id),
  },
  google: {
    packageName: "@ai-sdk/google",
    keyVariable: "GOOGLE_GENERATIVE_AI_API_KEY",
    baseUrlVariable: "GOOGLE_GENERATIVE_AI_BASE_URL",
    label: "Google Gemini API",
    create: (module, settings, id) => (module.createGoogleGenerativeAI as Factory<GoogleProvider>)(settings)(id),
  },
};

export const PROVIDER_NAMES: readonly ProviderName[] = ["anthropic", "openai", "openai-chat", "ollama", "google"];

/** Limits assumed for a model the facts table does not know (a local model): said in a warning. */
const ASSUMED_FACTS: Pick<ModelFacts, "contextWindow" | "maxTokens"> = { contextWindow: 128_000, maxTokens: 8_192 };

/** `openai:gpt-5` → `{ provider: "openai", id: "gpt-5" }`; a bare id is Claude's. */
export function parseModelSpec(spec: string): { provider: ProviderName; id: string } | { error: string } {
  const colon = spec.indexOf(":");
  if (colon < 0) return { provider: "anthropic", id: spec };
  const provider = spec.slice(0, colon);
  const id = spec.slice(colon + 1);
  if (!(PROVIDER_NAMES as readonly string[]).includes(provider)) {
    return { error: `Unknown provider "${provider}" in --model ${spec} (one of: ${PROVIDER_NAMES.join(", ")}; a bare id is a Claude model).` };
  }
  if (!id) return { error: `--model ${spec} names no model id (e.g. ${provider}:<id>).` };
  return { provider: provider as ProviderName, id };
}

export type ModuleImporter = (name: string) => Promise<Record<string, unknown>>;
const importModule: ModuleImporter = (name) => import(name) as Promise<Record<string, unknown>>;

/**
 * The session's model. Errors (an unknown provider, a missing key, a provider package not
 * installed) come back as one line for the caller to print, exiting 2. Without `--model` or with a
 * bare id it is `chooseModel`'s choice, unchanged: Claude with ANTHROPIC_API_KEY, else the offline demo.
 */
export async function chooseSessionModel(
  options: Pick<CliOptions, "offline" | "model" | "baseUrl">,
  env: Record<string, string | undefined>,
  demoPace = 1,
  load: ModuleImporter = importModule,
): Promise<ModelChoice | { error: string }> {
  if (options.offline || options.model === undefined) return chooseModel(options, env, demoPace);
  const parsed = parseModelSpec(options.model);
  if ("error" in parsed) return parsed;
  if (parsed.provider === "anthropic") {
    const explicit = options.model.startsWith("anthropic:");
    if (explicit && !env.ANTHROPIC_API_KEY) return { error: `--model ${options.model} needs ANTHROPIC_API_KEY in the environment.` };
    const baseUrl = options.baseUrl ?? env.ANTHROPIC_BASE_URL;
    return chooseModel({ ...options, model: parsed.id }, { ...env, ...(baseUrl ? { ANTHROPIC_BASE_URL: baseUrl } : {}) }, demoPace);
  }

  const spec = PROVIDERS[parsed.provider];
  const apiKey = spec.keyVariable ? env[spec.keyVariable] : "ollama";
  if (!apiKey) return { error: `--model ${options.model} needs ${spec.keyVariable} in the environment.` };
  let module: Record<string, unknown>;
  try {
    module = await load(spec.packageName);
  } catch {
    return { error: `--model ${options.model} needs the package ${spec.packageName}: npm install ${spec.packageName}` };
  }
  const baseURL = options.baseUrl ?? (spec.baseUrlVariable ? env[spec.baseUrlVariable] : undefined) ?? spec.defaultBaseUrl;
  const languageModel = spec.create(module, { apiKey, ...(baseURL ? { baseURL } : {}) }, parsed.id);
  const known = knownModelFacts(languageModel.provider, languageModel.modelId);
  const streamFn = fromAiSdkModel(languageModel, { secrets: [apiKey], ...(known ? {} : { facts: ASSUMED_FACTS }) });
  const model = streamFn.model;
  return {
    model,
    streamFn,
    offline: false,
    label: `${model.name === model.id ? model.id : `${model.name} (${model.id})`} via ${spec.label}${baseURL ? ` at ${baseURL}` : ""}`,
    secrets: spec.keyVariable ? [apiKey] : [],
    ...(known
      ? {}
      : {
          warning: `Model "${parsed.id}" is not in the facts table: assuming a ${ASSUMED_FACTS.contextWindow}-token context window, ${ASSUMED_FACTS.maxTokens} output tokens, no cost.`,
        }),
  };
}
