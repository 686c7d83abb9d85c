import type {
  AssistantMessage,
  AssistantMessageEvent,
  AssistantMessageEventStream,
  Message,
  TranscriptContext,
} from "../../src/types.js";

/** A recognisable fake key: tests assert it never appears in events or messages. */
export const API_KEY = "sk-ant-test-SECRET-0123456789";

export const userText = (text: string): Message => ({ role: "user", content: text, timestamp: 1 });

export const contextOf = (...messages: Message[]): TranscriptContext => ({
  messages: messages.length > 0 ? messages : [userText("Hello")],
});

export async function collect(stream: AssistantMessageEventStream): Promise<AssistantMessageEvent[]> {
  const events: AssistantMessageEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** A compact view of an event: its type and the field that matters for that type. */
export type Projected = [string, ...unknown[]];

export function project(event: AssistantMessageEvent): Projected {
  switch (event.type) {
    case "start":
      return ["start"];
    case "text_start":
    case "thinking_start":
    case "toolcall_start":
      return [event.type, event.contentIndex];
    case "text_delta":
    case "thinking_delta":
    case "toolcall_delta":
      return [event.type, event.contentIndex, event.delta];
    case "text_end":
    case "thinking_end":
      return [event.type, event.contentIndex, event.content];
    case "toolcall_end":
      return [event.type, event.contentIndex, event.toolCall];
    case "done":
      return ["done", event.reason];
    case "error":
      return ["error", event.reason];
  }
}

/** The final message of a sequence, with `timestamp`/`durationMs` checked and removed. */
export function finalOf(events: AssistantMessageEvent[]): Omit<AssistantMessage, "timestamp" | "durationMs"> {
  const last = events[events.length - 1];
  const message = last?.type === "done" ? last.message : last?.type === "error" ? last.error : undefined;
  if (!message) throw new Error(`stream did not end with done/error: ${JSON.stringify(events.map(project))}`);
  if (typeof message.timestamp !== "number" || typeof message.durationMs !== "number" || message.durationMs < 0) {
    throw new Error("final message lacks timestamp/durationMs");
  }
  const { timestamp: _t, durationMs: _d, ...rest } = message;
  return rest;
}

/** Usage priced like Haiku 4.5, the fixture model (1 / 5 / 0.1 / 1.25 dollars per million tokens). */
export function haikuUsage(input: number, output: number, cacheRead = 0, cacheWrite = 0): AssistantMessage["usage"] {
  const cost = {
    input: (input * 1) / 1e6,
    output: (output * 5) / 1e6,
    cacheRead: (cacheRead * 0.1) / 1e6,
    cacheWrite: (cacheWrite * 1.25) / 1e6,
  };
  return {
    input,
    output,
    cacheRead,
    cacheWrite,
    totalTokens: input + output + cacheRead + cacheWrite,
    cost: { ...cost, total: cost.input + cost.output + cost.cacheRead + cost.cacheWrite },
  };
}

/** The fixture model (not on the SDK's deprecation list, so the SDK prints no warning). */
export const FIXTURE_MODEL_ID = "claude-haiku-4-5";

/** The fields every message from the provider carries. */
export const ANTHROPIC_FIELDS = { role: "assistant", api: "anthropic-messages", provider: "anthropic", model: FIXTURE_MODEL_ID } as const;

/** Collects a stream and checks the API key appears nowhere in what the caller sees. */
export async function collectChecked(stream: AssistantMessageEventStream): Promise<AssistantMessageEvent[]> {
  const events = await collect(stream);
  if (JSON.stringify(events).includes(API_KEY)) throw new Error("the API key leaked into the events");
  const final = await stream.result();
  if (JSON.stringify(final).includes(API_KEY)) throw new Error("the API key leaked into the final message");
  return events;
}
