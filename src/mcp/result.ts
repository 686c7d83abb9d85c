/**
 * An MCP `tools/call` result as the loop's tool result: text and images as they are, embedded
 * resources as text (or an image), resource links and audio as a line saying what they are,
 * `structuredContent` kept, `isError` kept. The text is bounded: a result over the bound is cut
 * with a note, as the file tools do, so one server cannot flood the transcript.
 */
import type { AgentToolResult, ImageContent, JsonValue, TextContent } from "../types.js";
import type { McpCallErrorKind, McpToolDetails } from "./types.js";

/** The part of the SDK's `CallToolResult` read here (content items are read defensively: servers vary). */
export interface McpCallResult {
  content?: unknown[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export interface ResultLimits {
  resultChars: number;
  binaryChars: number;
}

type Part = TextContent | ImageContent;

export function toToolResult(server: string, tool: string, result: McpCallResult, limits: ResultLimits): AgentToolResult<McpToolDetails> {
  const parts: Part[] = [];
  for (const item of Array.isArray(result.content) ? result.content : []) parts.push(...contentPart(item, limits));
  const structured = result.structuredContent;
  // A server that only returns structured content: the model sees it as JSON (as the spec advises servers to send it).
  if (parts.length === 0 && structured !== undefined) parts.push({ type: "text", text: JSON.stringify(structured) });
  if (parts.length === 0) parts.push({ type: "text", text: result.isError ? "(the tool failed without a message)" : "(no output)" });
  const bounded = boundTexts(parts, limits.resultChars);
  const details: McpToolDetails = { mcp: { server, tool, ...(bounded.truncated ? { truncated: true } : {}) } };
  return {
    content: bounded.parts,
    details,
    ...(structured !== undefined && isJsonObject(structured) ? { structuredContent: structured as JsonValue } : {}),
    ...(result.isError ? { isError: true } : {}),
  };
}

/** A typed error result: the call did not reach the server, or its outcome is unknown. */
export function errorResult(server: string, tool: string, kind: McpCallErrorKind, message: string): AgentToolResult<McpToolDetails> {
  return { content: [{ type: "text", text: message }], details: { mcp: { server, tool, error: { kind, message } } }, isError: true };
}

function contentPart(item: unknown, limits: ResultLimits): Part[] {
  if (typeof item !== "object" || item === null) return [];
  const part = item as Record<string, unknown>;
  switch (part.type) {
    case "text":
      return typeof part.text === "string" ? [{ type: "text", text: part.text }] : [];
    case "image":
      return binary(part.data, part.mimeType, "image", limits);
    case "audio":
      return [{ type: "text", text: `[audio ${describeBinary(part.data, part.mimeType)}: not shown]` }];
    case "resource_link":
      return [{ type: "text", text: `[resource link: ${stringOr(part.name, "")} ${stringOr(part.uri, "?")}${typeof part.description === "string" ? ` — ${part.description}` : ""}]` }];
    case "resource": {
      const resource = (part.resource ?? {}) as Record<string, unknown>;
      const uri = stringOr(resource.uri, "?");
      if (typeof resource.text === "string") return [{ type: "text", text: `[resource ${uri}]\n${resource.text}` }];
      const mimeType = stringOr(resource.mimeType, "");
      if (mimeType.startsWith("image/")) return binary(resource.blob, mimeType, `resource ${uri}`, limits);
      return [{ type: "text", text: `[resource ${uri} (${describeBinary(resource.blob, mimeType)}): not shown]` }];
    }
    default:
      return [{ type: "text", text: `[content of type ${JSON.stringify(String(part.type)).slice(0, 40)}: not shown]` }];
  }
}

function binary(data: unknown, mimeType: unknown, what: string, limits: ResultLimits): Part[] {
  if (typeof data !== "string" || typeof mimeType !== "string") return [{ type: "text", text: `[${what}: malformed, not shown]` }];
  if (data.length > limits.binaryChars) return [{ type: "text", text: `[${what} (${describeBinary(data, mimeType)}): over the ${limits.binaryChars}-character limit, not shown]` }];
  return [{ type: "image", data, mimeType }];
}

function describeBinary(data: unknown, mimeType: unknown): string {
  const bytes = typeof data === "string" ? Math.floor((data.length * 3) / 4) : 0;
  return `${typeof mimeType === "string" && mimeType ? mimeType : "binary"}, ${bytes} bytes`;
}

/**
 * The text parts cut to `max` characters in all, the text ending at the cut with a note of what was
 * left out. A cut that falls between two parts still gets its note (on the last text kept, or as a
 * part of its own when none is), so a reader always learns that the result is not whole.
 */
function boundTexts(parts: Part[], max: number): { parts: Part[]; truncated: boolean } {
  const total = parts.reduce((sum, part) => sum + (part.type === "text" ? part.text.length : 0), 0);
  if (total <= max) return { parts, truncated: false };
  const note = `\n… (cut at ${max} characters: the server's result had ${total})`;
  const out: Part[] = [];
  let room = max;
  let noted = false;
  for (const part of parts) {
    if (part.type !== "text") {
      out.push(part);
      continue;
    }
    if (room <= 0) continue;
    if (part.text.length <= room) {
      out.push(part);
      room -= part.text.length;
      continue;
    }
    let keep = room;
    // Do not split a surrogate pair.
    if (keep > 0 && /[\uD800-\uDBFF]/.test(part.text.charAt(keep - 1))) keep--;
    out.push({ type: "text", text: `${part.text.slice(0, keep)}${note}` });
    noted = true;
    room = 0;
  }
  if (!noted) {
    // The cut fell on a part boundary: the parts after it were dropped whole.
    let last = out.length - 1;
    while (last >= 0 && out[last]!.type !== "text") last--;
    const kept = out[last];
    if (kept?.type === "text") out[last] = { type: "text", text: `${kept.text}${note}` };
    else out.push({ type: "text", text: note.trimStart() });
  }
  return { parts: out, truncated: true };
}

function isJsonObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const stringOr = (value: unknown, fallback: string): string => (typeof value === "string" ? value : fallback);
