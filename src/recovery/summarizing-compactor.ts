/**
 * The built-in compactor (SPEC R62): keeps the last turns verbatim and replaces everything older
 * by one summary the model writes, chunk by chunk, each request fitting the window.
 *
 * The replacement transcript is
 *
 *   [currentSystemMessage(older)?, summaryMessage(summary), ...the last `keepTurns` turns]
 *
 * The older part's system messages collapse into one leading system message (as `Agent.reset()`
 * keeps them, R54), so replaying the replacement yields the same prompt and declared tools (R30).
 * Nothing to compact (too few turns, or only system messages before them): the same array is
 * returned, and the loop surfaces the overflow.
 */
import type { AgentMessage, Compactor, CompactRequest, Message, Model } from "../types.js";
import { AgentInputError } from "../boundary/errors.js";
import { errorText } from "../loop/tool-results.js";
import { currentSystemMessage } from "../transcript/index.js";
import { abortable, throwIfAborted } from "./abortable.js";
import { isExhausted, takeChunk, type ChunkCursor } from "./chunk-turns.js";
import { CompactionError } from "./compaction-error.js";
import { renderMessage } from "./render-message.js";
import { summaryMessage } from "./summary-message.js";
import { DEFAULT_SUMMARY_INSTRUCTIONS, requestOverheadChars, summaryFromResponse, summaryRequestMessages } from "./summary-request.js";
import { CHARS_PER_TOKEN } from "./token-estimate.js";
import { keptTailStart, splitTurns } from "./turns.js";

export interface SummarizingCompactorOptions {
  /** Turns kept verbatim at the end (a turn: a user message and everything up to the next). Default 2; 0 summarizes all. */
  keepTurns?: number;
  /**
   * The most tokens (estimated, characters / 4) one summary request may carry: instructions,
   * previous summary and conversation. Default: half the model's `contextWindow`, and at most the
   * window minus `maxSummaryTokens`.
   */
  chunkTokens?: number;
  /** The summarizer's system prompt. Default `DEFAULT_SUMMARY_INSTRUCTIONS`. */
  instructions?: string;
  /** The output limit of each summary request (`maxTokens`). Default: 8,192, or the model's `maxTokens` if lower. */
  maxSummaryTokens?: number;
  /**
   * Turns the transcript's messages into provider messages for the summary, one turn at a time.
   * Default: keep the four provider roles and drop app-defined messages (`defaultConvertToLlm`).
   */
  convertToLlm?: (messages: AgentMessage[]) => Message[] | Promise<Message[]>;
}

const DEFAULT_KEEP_TURNS = 2;
const DEFAULT_SUMMARY_TOKENS = 8_192;
/** A chunk must leave at least this much room for conversation, or the window is too small to summarize in. */
const MIN_CONVERSATION_TOKENS = 32;

export function summarizingCompactor(options: SummarizingCompactorOptions = {}): Compactor {
  if (typeof options !== "object" || options === null) throw new AgentInputError("options", "summarizingCompactor: options must be an object");
  const keepTurns = checkCount(options.keepTurns, "keepTurns", 0) ?? DEFAULT_KEEP_TURNS;
  const chunkTokens = checkCount(options.chunkTokens, "chunkTokens", 1);
  const maxSummaryTokens = checkCount(options.maxSummaryTokens, "maxSummaryTokens", 1);
  const instructions = options.instructions ?? DEFAULT_SUMMARY_INSTRUCTIONS;
  if (typeof instructions !== "string" || instructions.trim() === "") {
    throw new AgentInputError("instructions", "summarizingCompactor: instructions must be a non-empty string");
  }
  const convertToLlm = options.convertToLlm ?? keepProviderMessages;
  if (typeof convertToLlm !== "function") throw new AgentInputError("convertToLlm", "summarizingCompactor: convertToLlm must be a function");

  return async (request: CompactRequest, signal: AbortSignal): Promise<AgentMessage[]> => {
    const { messages, model } = request;
    if (!Array.isArray(messages)) throw new AgentInputError("messages", "summarizingCompactor: request.messages must be an array");
    throwIfAborted(signal);
    const tail = keptTailStart(messages, keepTurns);
    if (tail === undefined) return messages;
    const older = messages.slice(0, tail);
    const turns = await renderTurns(older, convertToLlm);
    if (turns.every((turn) => turn.length === 0)) return messages; // only messages the summary could not see

    const outputTokens = maxSummaryTokens ?? defaultSummaryTokens(model);
    const timestamp = lastTimestamp(older);
    const summary = await summarizeInChunks({
      turns,
      instructions,
      chunkTokens: chunkTokens ?? defaultChunkTokens(model, outputTokens),
      complete: (chunk) => request.complete(chunk, { maxTokens: outputTokens }),
      signal,
      timestamp,
    });
    throwIfAborted(signal);
    const system = currentSystemMessage(older);
    return [...(system ? [system] : []), summaryMessage(summary, timestamp), ...messages.slice(tail)];
  };
}

interface SummarizeArgs {
  turns: string[][];
  instructions: string;
  chunkTokens: number;
  complete: (messages: Message[]) => Promise<unknown>;
  signal: AbortSignal;
  timestamp: number;
}

/** One request per chunk, in order; each carries the summary so far and returns the next. */
async function summarizeInChunks(args: SummarizeArgs): Promise<string> {
  let summary: string | undefined;
  let cursor: ChunkCursor = { turn: 0, message: 0 };
  while (!isExhausted(args.turns, cursor)) {
    throwIfAborted(args.signal);
    const overheadTokens = Math.ceil(requestOverheadChars(args.instructions, summary) / CHARS_PER_TOKEN);
    const budgetTokens = args.chunkTokens - overheadTokens;
    if (budgetTokens < MIN_CONVERSATION_TOKENS) {
      throw new CompactionError(
        "window_too_small",
        `Compaction failed: a summary request may carry ${args.chunkTokens} tokens, but the instructions and the summary so far take ${overheadTokens}; raise chunkTokens or lower maxSummaryTokens`,
      );
    }
    const chunk = takeChunk(args.turns, cursor, budgetTokens * CHARS_PER_TOKEN);
    const request = summaryRequestMessages({ instructions: args.instructions, previousSummary: summary, conversation: chunk.text, timestamp: args.timestamp });
    let response: unknown;
    try {
      response = await abortable(args.complete(request), args.signal);
    } catch (error) {
      if (error instanceof CompactionError) throw error;
      throw new CompactionError("request_failed", `Compaction failed: the summary request threw: ${errorText(error)}`, { cause: error });
    }
    summary = summaryFromResponse(response);
    cursor = chunk.next;
  }
  // The loop only ends with a summary: `turns` holds at least one rendered message.
  return summary!;
}

/** The older part's turns, each converted for the provider and rendered message by message. */
async function renderTurns(older: AgentMessage[], convertToLlm: NonNullable<SummarizingCompactorOptions["convertToLlm"]>): Promise<string[][]> {
  const rendered: string[][] = [];
  for (const turn of splitTurns(older)) {
    let converted: Message[];
    try {
      converted = await convertToLlm(turn);
    } catch (error) {
      throw new CompactionError("convert_failed", `Compaction failed: convertToLlm threw: ${errorText(error)}`, { cause: error });
    }
    if (!Array.isArray(converted)) throw new CompactionError("convert_failed", "Compaction failed: convertToLlm did not return an array of messages");
    const texts: string[] = [];
    for (const message of converted) {
      const text = typeof message === "object" && message !== null ? renderMessage(message) : undefined;
      if (text !== undefined) texts.push(text);
    }
    rendered.push(texts);
  }
  return rendered;
}

function keepProviderMessages(messages: AgentMessage[]): Message[] {
  return messages.filter((message): message is Message => {
    const role = (message as { role?: unknown }).role;
    return role === "user" || role === "assistant" || role === "toolResult" || role === "system";
  });
}

function defaultSummaryTokens(model: Model): number {
  const limit = model.maxTokens;
  return typeof limit === "number" && Number.isFinite(limit) && limit > 0 ? Math.min(DEFAULT_SUMMARY_TOKENS, Math.floor(limit)) : DEFAULT_SUMMARY_TOKENS;
}

function defaultChunkTokens(model: Model, outputTokens: number): number {
  const window = model.contextWindow;
  if (typeof window !== "number" || !Number.isFinite(window) || window <= 0) {
    throw new CompactionError("window_too_small", `Compaction failed: the model "${model.id}" has no context window (${String(window)}); set chunkTokens`);
  }
  return Math.min(Math.floor(window / 2), Math.floor(window) - outputTokens);
}

/** The summary's timestamp: the last summarized message's, so the transcript stays in time order. */
function lastTimestamp(messages: readonly AgentMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const timestamp = (messages[i] as { timestamp?: unknown }).timestamp;
    if (typeof timestamp === "number" && Number.isFinite(timestamp)) return timestamp;
  }
  return Date.now();
}

function checkCount(value: number | undefined, field: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    throw new AgentInputError(field, `summarizingCompactor: ${field} must be an integer ≥ ${min}, got ${String(value)}`);
  }
  return value;
}

