/**
 * A `StreamFn` over fetch + server-sent events, for the example's local Claude proxy
 * (scripts/example-web.ts): it posts the request context, the server calls Claude with its own
 * key, and streams the assistant events back. Each event arrives without the repeated `partial`
 * message: `*_start`/`*_end` events carry their content block as `block`, deltas only the delta,
 * so this side rebuilds the partial message as it goes.
 *
 * Like every StreamFn it never throws: HTTP and network failures, a cut stream and an abort end
 * the stream with an `error` event (`stopReason` "error" or "aborted").
 */
import {
  emptyUsage,
  PushAssistantStream,
  type AssistantMessage,
  type AssistantMessageEvent,
  type Model,
  type StreamFn,
  type TranscriptContext,
} from "xstate-agent-loop";

type WireEvent = Record<string, unknown> & { type: AssistantMessageEvent["type"]; contentIndex?: number; block?: AssistantMessage["content"][number]; delta?: string };

export function proxyStreamFn(url: string): StreamFn {
  return (model, context, options) => {
    const stream = new PushAssistantStream();
    void pump(stream, url, model, context, { reasoning: options.reasoning, maxTokens: options.maxTokens }, options.signal);
    return stream;
  };
}

async function pump(
  stream: PushAssistantStream,
  url: string,
  model: Model,
  context: TranscriptContext,
  options: { reasoning?: string; maxTokens?: number },
  signal: AbortSignal | undefined,
): Promise<void> {
  let partial: AssistantMessage = {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: emptyUsage(),
    stopReason: "stop",
    timestamp: Date.now(),
  };
  let ended = false;
  const fail = (reason: "error" | "aborted", errorMessage: string) =>
    stream.push({ type: "error", reason, error: { ...partial, content: partial.content.slice(), stopReason: reason, errorMessage } });

  /** The wire event as an `AssistantMessageEvent`, with the rebuilt partial. */
  const decode = (wire: WireEvent): AssistantMessageEvent => {
    const { block, ...event } = wire;
    if (event.type === "start") partial = event.partial as AssistantMessage;
    else if (event.type === "done" || event.type === "error") ended = true;
    else if (block) partial.content[event.contentIndex!] = block;
    else {
      const current = partial.content[event.contentIndex!];
      if (current?.type === "text" && event.type === "text_delta") current.text += event.delta;
      if (current?.type === "thinking" && event.type === "thinking_delta") current.thinking += event.delta;
    }
    return (event.type === "start" || ended ? event : { ...event, partial }) as unknown as AssistantMessageEvent;
  };

  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ context, options }),
      ...(signal ? { signal } : {}),
    });
    if (!response.ok || !response.body) return fail("error", `Proxy: HTTP ${response.status} ${(await response.text()).trim()}`);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const data = buffer
          .slice(0, end)
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trimStart())
          .join("\n");
        buffer = buffer.slice(end + 2);
        if (data !== "") stream.push(decode(JSON.parse(data) as WireEvent));
      }
    }
    if (!ended) fail(signal?.aborted ? "aborted" : "error", signal?.aborted ? "Request was aborted" : "Proxy: the stream ended early");
  } catch (error) {
    if (signal?.aborted) fail("aborted", "Request was aborted");
    else fail("error", `Proxy: ${error instanceof Error ? error.message : String(error)}`);
  }
}
