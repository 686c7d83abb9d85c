/**
 * Time travel's data side (no I/O): where a durable session can be forked, and what its journal
 * recorded. Every record boundary inside a run is a persisted point: R81 resumes a journal cut
 * after any record (a crash there), so a new session seeded with the records up to that point and
 * resumed is the run restored at that point (R13), with the same model responses up to it.
 */
import type { AgentMessage, AssistantMessage } from "../types.js";
import type { ScriptedBlock, ScriptedResponse } from "../providers/scripted.js";
import type { Json } from "../store/run-store.js";
import { decodeOut, isJournalRecord, type JournalRecord } from "../durable/records.js";

/** A point a fork can start from: the session's journal up to and including record `seq`. */
export interface ForkPoint {
  seq: number;
  /** The run (1, 2, … in the session) the point lies in. */
  run: number;
  /** What comes next in the original: e.g. "before request 2", "before read_file runs". */
  label: string;
  /** The point lies just before a model response: a fork may replace that response. */
  beforeResponse?: {
    /** 1-based, within the run. */
    request: number;
    /** The recorded response's text (what the page offers to edit). */
    text: string;
    /** The recorded response's tool calls (kept unless the edit drops them). */
    calls: { name: string; arguments: Record<string, unknown>; id: string }[];
  };
}

interface Entry {
  seq: number;
  record: JournalRecord;
}

const entriesOf = (stored: readonly { seq: number; record: Json }[]): Entry[] =>
  stored.flatMap(({ seq, record }) => (isJournalRecord(record) ? [{ seq, record }] : []));

/** The assistant message a `response` record holds (its `message_end`), if it got that far. */
export function responseMessage(record: JournalRecord): AssistantMessage | undefined {
  if (record.k !== "response") return undefined;
  for (const event of decodeOut(record.out).reverse()) {
    if ((event as { type?: string }).type === "message_end") return (event as { message: AssistantMessage }).message;
  }
  return undefined;
}

/** The recorded message as a scripted response (the same blocks, ids and stop reason). */
export function scriptedFrom(message: AssistantMessage): ScriptedResponse {
  const content: ScriptedBlock[] = message.content.map((block) =>
    block.type === "text"
      ? { type: "text", text: block.text }
      : block.type === "thinking"
        ? { type: "thinking", thinking: block.thinking, ...(block.thinkingSignature ? { signature: block.thinkingSignature } : {}) }
        : { type: "toolCall", name: block.name, arguments: block.arguments, id: block.id },
  );
  const stopReason = message.stopReason;
  return { content, ...(stopReason === "error" || stopReason === "aborted" ? { stopReason, errorMessage: message.errorMessage ?? stopReason } : {}) };
}

/** A record of a model response: its write-ahead `response`, or what its stream emitted before another record came between (`out`). */
const isStreamRecord = (record: JournalRecord | undefined): boolean => record !== undefined && (record.k === "response" || (record.k === "out" && record.job === "streamResponse"));

function labelOf(next: JournalRecord, request: number, streaming: boolean): string {
  if (isStreamRecord(next)) return streaming ? `during request ${request}` : `before request ${request}`;
  const during = streaming ? `, during request ${request}` : "";
  switch (next.k) {
    case "intent":
      return `before ${next.toolName} runs (${next.toolCallId})${during}`;
    case "job":
    case "out":
      return `before ${next.job}${next.path === "run" ? "" : ` of ${next.path}`}${during}`;
    case "input":
      return next.input === "decision" ? `before the approval decision (${next.event.type.replace("approval.", "")})` : `before the ${next.input}`;
    case "end":
      return "before the run's end";
    case "queue":
      return `before a ${next.queue} queue ${next.op}`;
    default:
      return `before a ${next.k} record`;
  }
}

/**
 * Every point of the session's journal a fork can start from, in order. A request's stream may be
 * journaled in pieces (tools that start while it streams, R70, write their records in between): the
 * point before its first piece is "before request N", the only one where its response can be edited.
 */
export function forkPoints(stored: readonly { seq: number; record: Json }[]): ForkPoint[] {
  const entries = entriesOf(stored);
  const points: ForkPoint[] = [];
  let run = 0;
  let open = false;
  let request = 0;
  /** A request's stream has begun (a piece of it is journaled) and its response record is still to come. */
  let streaming = false;
  for (let i = 0; i < entries.length; i++) {
    const { record, seq } = entries[i];
    if (record.k === "run") {
      run++;
      open = true;
      request = 0;
      streaming = false;
    } else if (record.k === "end") open = false;
    else if (record.k === "response") streaming = false;
    else if (isStreamRecord(record)) streaming = true;
    const next = entries[i + 1]?.record;
    // A point must leave a run unfinished (else there is nothing to run), and something to come.
    if (!open || !next) continue;
    const starts = isStreamRecord(next) && !streaming;
    if (starts) request++;
    const point: ForkPoint = { seq, run, label: labelOf(next, request, streaming) };
    const message = starts ? responseMessage(entries.slice(i + 1).find((entry) => entry.record.k === "response")?.record ?? next) : undefined;
    if (message) {
      point.beforeResponse = {
        request,
        text: message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n"),
        calls: message.content.flatMap((block) => (block.type === "toolCall" ? [{ name: block.name, arguments: block.arguments, id: block.id }] : [])),
      };
    }
    points.push(point);
  }
  return points;
}

/** The responses the journal recorded after record `seq`, in order (a fork's stand-in model). */
export function recordedResponsesAfter(stored: readonly { seq: number; record: Json }[], seq: number): ScriptedResponse[] {
  return entriesOf(stored).flatMap((entry) => {
    const message = entry.seq > seq ? responseMessage(entry.record) : undefined;
    return message ? [scriptedFrom(message)] : [];
  });
}

/** A transcript line: what the page shows, and what two transcripts are compared by. */
export interface TranscriptLine {
  role: string;
  text: string;
  /** The message's role and content as JSON (no timestamps, durations or usage). */
  key: string;
}

const PREVIEW = 240;

export function transcriptLine(message: AgentMessage): TranscriptLine {
  const { role } = message as { role: string };
  const content = (message as { content?: unknown }).content;
  const blocks = typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? (content as Record<string, unknown>[]) : [];
  const text = blocks
    .map((block) => (block.type === "text" ? String(block.text) : block.type === "toolCall" ? `[${String(block.name)} ${JSON.stringify(block.arguments)}]` : block.type === "thinking" ? "[thinking]" : `[${String(block.type)}]`))
    .join(" ");
  return { role, text: text.length > PREVIEW ? `${text.slice(0, PREVIEW)}…` : text, key: JSON.stringify([role, content, (message as { isError?: unknown }).isError ?? null]) };
}

/** The first index where two transcripts differ (null: neither has a line the other lacks). */
export function divergence(a: readonly TranscriptLine[], b: readonly TranscriptLine[]): number | null {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i]?.key !== b[i]?.key) return i;
  return null;
}
