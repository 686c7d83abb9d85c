/** What a request to the route asks for, read from `useChat`'s body (or ours: stop, steer, follow-up). */
import { UIStreamRequestError } from "./errors.js";
import { readBodyText } from "./body.js";

export interface UIPartLike {
  type: string;
  text?: string;
  state?: string;
  approval?: { id: string; approved?: boolean; reason?: string };
}
export interface UIMessageLike {
  id?: string;
  role: "user" | "assistant" | "system";
  parts: UIPartLike[];
}

export type ChatRequest =
  | { kind: "resume"; chatId: string | undefined }
  | { kind: "stop"; chatId: string }
  | { kind: "queue"; chatId: string; queue: "steer" | "followUp"; text: string }
  | { kind: "approvals"; chatId: string; decisions: { approvalId: string; approved: boolean; reason?: string }[] }
  | { kind: "prompt"; chatId: string; text: string }
  /** The remote agent's requests (`createRemoteAgent` of ./react): answered with JSON, the events travel on `events`. */
  | { kind: "events"; chatId: string; after?: number; epoch?: string }
  | { kind: "run"; chatId: string; text: string }
  | { kind: "approve"; chatId: string; approvalId: string; options?: Record<string, unknown> }
  | { kind: "reject"; chatId: string; approvalId: string; reason: string }
  | { kind: "resumeRun"; chatId: string };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** A UI message as the route reads it: every part an object with a `type` (a `null` part once threw a TypeError, a 500). */
const isUIMessage = (value: unknown): value is UIMessageLike =>
  isRecord(value) && typeof value.role === "string" && Array.isArray(value.parts) && value.parts.every((part) => isRecord(part) && typeof part.type === "string");

/** A path segment decoded, or a typed 400: a malformed escape (`%E0%A4%A`) makes `decodeURIComponent` throw a URIError. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new UIStreamRequestError("invalid_request", 400, "The chat id in the path is not a valid percent-encoded segment");
  }
}

/** GET `<api>/<chatId>/stream` is `useChat`'s reconnect (`resume: true`). */
export function chatIdFromStreamUrl(url: string): string | undefined {
  const segments = new URL(url).pathname.split("/").filter(Boolean);
  return segments.at(-1) === "stream" && segments.length >= 2 ? decodeSegment(segments.at(-2)!) : undefined;
}

/** GET `<api>/<chatId>/events?after=N&epoch=E` is the remote agent's event stream. */
function eventsRequest(url: string): ChatRequest | undefined {
  const parsed = new URL(url);
  const segments = parsed.pathname.split("/").filter(Boolean);
  if (segments.at(-1) !== "events" || segments.length < 2) return undefined;
  const afterText = parsed.searchParams.get("after");
  const after = afterText === null ? undefined : Number(afterText);
  if (after !== undefined && (!Number.isSafeInteger(after) || after < 0)) throw new UIStreamRequestError("invalid_request", 400, "`after` must be a sequence number (a non-negative integer)");
  const epoch = parsed.searchParams.get("epoch") ?? undefined;
  return { kind: "events", chatId: decodeSegment(segments.at(-2)!), ...(after !== undefined ? { after } : {}), ...(epoch ? { epoch } : {}) };
}

export async function readChatRequest(request: Request, maxBodyBytes: number): Promise<ChatRequest> {
  if (request.method === "GET") return eventsRequest(request.url) ?? { kind: "resume", chatId: chatIdFromStreamUrl(request.url) };
  if (request.method !== "POST") throw new UIStreamRequestError("invalid_request", 405, `Method ${request.method} is not supported (GET to resume, POST otherwise)`);
  const text = await readBodyText(request, maxBodyBytes);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new UIStreamRequestError("invalid_request", 400, "The body is not JSON");
  }
  if (!isRecord(body) || typeof body.id !== "string" || body.id === "") throw new UIStreamRequestError("invalid_request", 400, "The body needs the chat's `id` (a non-empty string)");
  const chatId = body.id;
  if (body.action === "stop") return { kind: "stop", chatId };
  if (body.action === "steer" || body.action === "followUp") {
    if (typeof body.text !== "string" || body.text === "") throw new UIStreamRequestError("invalid_request", 400, "`text` must be a non-empty string");
    return { kind: "queue", chatId, queue: body.action, text: body.text };
  }
  if (body.action === "prompt") {
    if (typeof body.text !== "string" || body.text === "") throw new UIStreamRequestError("invalid_request", 400, "`text` must be a non-empty string");
    return { kind: "run", chatId, text: body.text };
  }
  if (body.action === "approve" || body.action === "reject") {
    if (typeof body.approvalId !== "string" || body.approvalId === "") throw new UIStreamRequestError("invalid_request", 400, "`approvalId` must be a non-empty string");
    if (body.action === "reject") return { kind: "reject", chatId, approvalId: body.approvalId, reason: typeof body.reason === "string" ? body.reason : "" };
    if (body.options !== undefined && !isRecord(body.options)) throw new UIStreamRequestError("invalid_request", 400, "`options` must be an object");
    return { kind: "approve", chatId, approvalId: body.approvalId, ...(body.options ? { options: body.options } : {}) };
  }
  if (body.action === "resume") return { kind: "resumeRun", chatId };
  if (body.action !== undefined) throw new UIStreamRequestError("invalid_request", 400, `Unknown action ${JSON.stringify(body.action)} (stop, steer, followUp, prompt, approve, reject, resume)`);
  if (body.trigger !== undefined && body.trigger !== "submit-message") throw new UIStreamRequestError("unsupported_trigger", 400, `Trigger ${JSON.stringify(body.trigger)} is not supported: the session owns its transcript (submit-message only)`);
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0 || !messages.every(isUIMessage)) {
    throw new UIStreamRequestError("invalid_request", 400, "`messages` must be a non-empty array of UI messages (a `role`, and `parts` that are objects with a `type`)");
  }
  const last = messages.at(-1)!;
  if (last.role === "assistant") {
    // useChat's answer to approval requests: the assistant message with its parts now `approval-responded`.
    const decisions = last.parts
      .filter((part) => part.state === "approval-responded" && isRecord(part.approval) && typeof part.approval.id === "string")
      .map((part) => ({ approvalId: part.approval!.id, approved: part.approval!.approved === true, ...(typeof part.approval!.reason === "string" ? { reason: part.approval!.reason } : {}) }));
    if (decisions.length === 0) throw new UIStreamRequestError("invalid_request", 400, "The last message is the assistant's and answers no approval");
    return { kind: "approvals", chatId, decisions };
  }
  const prompt = last.parts.map((part) => (part.type === "text" && typeof part.text === "string" ? part.text : "")).join("");
  if (last.role !== "user" || prompt === "") throw new UIStreamRequestError("invalid_request", 400, "The last message must be the user's, with text");
  return { kind: "prompt", chatId, text: prompt };
}
