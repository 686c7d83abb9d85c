/**
 * Protocol conformance: the route's responses parsed by ai@7's own UI-stream reader
 * (`parseJsonEventStream` with `uiMessageChunkSchema`, then `readUIMessageStream`), for every part
 * type the route emits. ai@7 declares Node ≥ 22, but its reader runs on Node 20 (it uses Web
 * streams only): this file runs on both legs of .ci/run.
 */
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema, type UIMessage, type UIMessageChunk } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, defineTool } from "../../src/index.js";
import { pause, scriptedModel, scriptedStreamFn, text, thinking, toolCall } from "../../src/testing/index.js";
import { createChatRoute, toUIMessageStreamResponse, type UIStreamChunk } from "../../src/ui-stream/index.js";

// Compile-time: every part we emit is one of ai@7's.
const conforms = (chunk: UIStreamChunk): UIMessageChunk => chunk;
void conforms;

const API = "http://chat.test/api/chat";

async function chunksOf(response: Response): Promise<UIMessageChunk[]> {
  expect(response.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1");
  const out: UIMessageChunk[] = [];
  const reader = parseJsonEventStream({ stream: response.body!, schema: uiMessageChunkSchema }).getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    if (!next.value.success) throw next.value.error;
    out.push(next.value.value as UIMessageChunk);
  }
  return out;
}

async function messageOf(chunks: UIMessageChunk[], message?: UIMessage): Promise<UIMessage> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last: UIMessage | undefined;
  for await (const next of readUIMessageStream({ stream, message, terminateOnError: false, onError: () => {} })) last = next;
  return structuredClone(last!);
}

const post = (body: unknown, signal?: AbortSignal) => new Request(API, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" }, signal });
const prompt = (textValue: string) => post({ id: "c1", trigger: "submit-message", messages: [{ id: "u", role: "user", parts: [{ type: "text", text: textValue }] }] });
const types = (chunks: UIMessageChunk[]) => chunks.map((chunk) => chunk.type);
const compactParts = (message: UIMessage) =>
  message.parts.map((part) =>
    part.type === "dynamic-tool" ? `${part.toolName}:${part.state}` : part.type === "text" || part.type === "reasoning" ? `${part.type}:${part.text}` : part.type === "steering-message" ? `steer:${(part.parts[0] as { text: string }).text}` : part.type,
  );

function makeAgent() {
  const tool = (name: string, options: { fails?: boolean; needsApproval?: boolean } = {}) =>
    defineTool({
      name,
      description: name,
      parameters: z.object({ q: z.string() }),
      needsApproval: options.needsApproval,
      execute: async (_id, { q }) => {
        if (options.fails) throw new Error(`${name} broke`);
        return { content: [{ type: "text", text: `${name}(${q})` }], details: { q } };
      },
    });
  const streamFn = scriptedStreamFn([
    { content: [thinking("Let me look"), text("Checking."), toolCall("lookup", { q: "a" }, "c-look"), toolCall("flaky", { q: "b" }, "c-flaky")], chunkSize: 4 },
    { content: [text("Writing."), toolCall("write_file", { q: "w" }, "c-write"), toolCall("deploy", { q: "d" }, "c-deploy")] },
    { content: [text("Done.")] },
    { content: [text("Working"), pause(60_000), text(" forever")] },
    { stopReason: "error", errorMessage: "model exploded" },
  ]);
  return new Agent({
    streamFn,
    initialState: { model: scriptedModel, tools: [tool("lookup"), tool("flaky", { fails: true }), tool("write_file", { needsApproval: true }), tool("deploy", { needsApproval: true })] },
  });
}

describe("ui-stream: the route's output read by ai@7's reader", () => {
  it("text, reasoning, tools, errors, steps, approvals (R82), steering (R53), disconnect, resume, stop (R29), failures", async () => {
    const agent = makeAgent();
    const route = createChatRoute({ createAgent: () => agent });

    // 1. A prompt: the response pauses when every open call waits for a decision.
    const first = await chunksOf(await route.handle(prompt("Do it")));
    const paused = await messageOf(first);
    expect(compactParts(paused)).toEqual([
      "data-agent-state",
      "step-start",
      "reasoning:Let me look",
      "text:Checking.",
      "lookup:output-available",
      "flaky:output-error",
      "step-start",
      "text:Writing.",
      "write_file:approval-requested",
      "deploy:approval-requested",
    ]);
    expect(types(first).filter((type) => !type.endsWith("-delta"))).toEqual([
      "start", "data-agent-state", "start-step", "data-agent-state",
      "reasoning-start", "reasoning-end", "text-start", "text-end",
      "tool-input-start", "tool-input-available", "tool-input-start", "tool-input-available",
      "data-agent-state", "tool-output-available", "tool-output-error", "data-agent-state", "finish-step",
      "start-step", "data-agent-state", "text-start", "text-end", "tool-input-start", "tool-input-available", "tool-input-start", "tool-input-available", "data-agent-state",
      "tool-approval-request", "data-agent-state", "tool-approval-request", "data-agent-state", "finish",
    ]);
    expect(first.at(-1)).toEqual({ type: "finish", finishReason: "tool-calls" });
    expect(agent.state.isStreaming).toBe(true);

    // 2. Steering while the run waits: queued (202), not a second run.
    const steer = await route.handle(post({ id: "c1", action: "steer", text: "Also tidy up" }));
    expect([steer.status, await steer.json()]).toEqual([202, { queued: "steer", steering: 1, followUp: 0 }]);

    // 3. useChat's answer: the assistant message with both parts `approval-responded`.
    const answered: UIMessage = {
      ...paused,
      parts: paused.parts.map((part) =>
        part.type === "dynamic-tool" && part.state === "approval-requested"
          ? ({ ...part, state: "approval-responded", approval: { id: part.approval.id, approved: part.toolName === "write_file", reason: part.toolName === "deploy" ? "Not today" : undefined } } as unknown as typeof part)
          : part,
      ),
    };
    const rest = await chunksOf(await route.handle(post({ id: "c1", trigger: "submit-message", messages: [{ id: "u", role: "user", parts: [{ type: "text", text: "Do it" }] }, answered] })));
    expect(rest[0]).toEqual({ type: "start", messageId: paused.id });
    const final = await messageOf(rest, answered);
    expect(compactParts(final).slice(6)).toEqual([
      "step-start",
      "text:Writing.",
      "write_file:output-available",
      "deploy:output-denied",
      "step-start",
      "steer:Also tidy up",
      "text:Done.",
    ]);
    expect(types(rest).filter((type) => type.startsWith("tool-") || type === "steering-message" || type === "finish")).toEqual([
      "tool-approval-response", "tool-approval-response", "tool-output-denied", "tool-output-available", "steering-message", "finish",
    ]);
    expect(rest.at(-1)).toEqual({ type: "finish", finishReason: "stop" });
    await agent.waitForIdle();

    // 4. Disconnect is not stop: the client goes away, the run goes on; a reconnect replays the run whole.
    const client = new AbortController();
    const live = await route.handle(new Request(API, { method: "POST", body: JSON.stringify({ id: "c1", messages: [{ role: "user", parts: [{ type: "text", text: "Work" }] }] }), signal: client.signal }));
    const reader = live.body!.getReader();
    let seen = "";
    while (!seen.includes("Working")) seen += new TextDecoder().decode((await reader.read()).value);
    client.abort();
    await reader.cancel();
    expect(agent.state.isStreaming).toBe(true);
    const resumedResponse = await route.handle(new Request(`${API}/c1/stream`));
    const resumedReader = resumedResponse.body!.getReader();
    let replayed = "";
    while (!replayed.includes("Working")) replayed += new TextDecoder().decode((await resumedReader.read()).value);

    // 5. Stop is an explicit request: it aborts the run, and the live response ends with `abort`.
    const stop = await route.handle(post({ id: "c1", action: "stop" }));
    expect(await stop.json()).toEqual({ stopped: true });
    while (true) {
      const { value, done } = await resumedReader.read();
      if (done) break;
      replayed += new TextDecoder().decode(value);
    }
    const resumed = await chunksOf(new Response(replayed, { headers: { "x-vercel-ai-ui-message-stream": "v1" } }));
    expect(compactParts(await messageOf(resumed))).toEqual(["data-agent-state", "step-start", "text:Working"]);
    expect(resumed.at(-1)).toEqual({ type: "abort", reason: "aborted" });
    await agent.waitForIdle();
    expect((await route.handle(new Request(`${API}/c1/stream`))).status).toBe(204);

    // 6. A failed response: an `error` part, then `finish` with reason error.
    const failed = await chunksOf(await route.handle(prompt("Again")));
    expect(failed.filter((chunk) => chunk.type === "error" || chunk.type === "finish")).toEqual([
      { type: "error", errorText: "model exploded" },
      { type: "finish", finishReason: "error" },
    ]);
    route.close();
  });

  it("R60/R66: a retry travels as a transient data-retry part; tool progress as preliminary output", async () => {
    const progress = defineTool({
      name: "progress",
      description: "progress",
      parameters: z.object({}),
      execute: async (_id, _args, _signal, onUpdate) => {
        onUpdate?.({ content: [{ type: "text", text: "half" }], details: {} });
        return { content: [{ type: "text", text: "all" }], details: {} };
      },
    });
    const agent = new Agent({
      streamFn: scriptedStreamFn([{ failure: "overloaded" }, { content: [toolCall("progress", {}, "p1")] }, { content: [text("ok")] }]),
      initialState: { model: scriptedModel, tools: [progress] },
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
    });
    const route = createChatRoute({ createAgent: () => agent });
    const chunks = await chunksOf(await route.handle(prompt("Go")));
    expect(chunks.filter((chunk) => chunk.type === "data-retry" || chunk.type === "tool-output-available")).toEqual([
      { type: "data-retry", data: { attempt: 2, maxAttempts: 2, delayMs: expect.any(Number), errorMessage: "Scripted model: HTTP 529 overloaded_error: Overloaded" }, transient: true },
      { type: "tool-output-available", toolCallId: "p1", output: { content: [{ type: "text", text: "half" }], details: {} }, dynamic: true, preliminary: true },
      { type: "tool-output-available", toolCallId: "p1", output: { content: [{ type: "text", text: "all" }], details: {} }, dynamic: true },
    ]);
    expect(compactParts(await messageOf(chunks))).toEqual(["data-agent-state", "step-start", "progress:output-available", "step-start", "text:ok"]);
    route.close();
  });

  it("bad input gets a typed 4xx, never a crash", async () => {
    const route = createChatRoute({ createAgent: () => makeAgent() });
    const bodies: [unknown, number, string][] = [
      [{}, 400, "invalid_request"],
      [{ id: "c", trigger: "regenerate-message", messages: [] }, 400, "unsupported_trigger"],
      [{ id: "c", action: "steer", text: "x" }, 409, "no_active_run"],
      [{ id: "c", action: "dance" }, 400, "invalid_request"],
    ];
    const got = [];
    for (const [body] of bodies) {
      const response = await route.handle(post(body));
      got.push([body, response.status, ((await response.json()) as { error: { code: string } }).error.code]);
    }
    const notJson = await route.handle(new Request(API, { method: "POST", body: "{" }));
    expect(got).toEqual(bodies);
    expect(notJson.status).toBe(400);
    route.close();
  });

  it("a body over maxBodyBytes is a 413 payload_too_large, read no further than the bound; 4 MiB by default", async () => {
    let opened = 0;
    const route = createChatRoute({ maxBodyBytes: 64 * 1024, createAgent: () => (opened++, makeAgent()) });
    const code = async (response: Response) => [response.status, ((await response.json()) as { error: { code: string } }).error.code];
    // No content-length: 200 chunks of 16 KB, counted as the route pulls them.
    let pulled = 0;
    const chunk = new TextEncoder().encode("x".repeat(16 * 1024));
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= 200 * chunk.byteLength) return controller.close();
        pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const streamed = await code(await route.handle(new Request(API, { method: "POST", body: endless, duplex: "half" } as RequestInit)));
    const declared = await code(await route.handle(prompt("y".repeat(65 * 1024))));
    const underBound = await route.handle(prompt("y".repeat(60 * 1024)));
    const byDefault = createChatRoute({ createAgent: () => (opened++, makeAgent()) });
    const overDefault = await code(await byDefault.handle(prompt("z".repeat(4 * 1024 * 1024))));
    expect([streamed, declared, underBound.status, overDefault, opened]).toEqual([[413, "payload_too_large"], [413, "payload_too_large"], 200, [413, "payload_too_large"], 1]);
    expect(pulled).toBeLessThan(3 * 64 * 1024);
    await underBound.text();
    route.close();
    byDefault.close();
  });

  it("malformed parts and percent-escapes get a typed 400, from the route and from toUIMessageStreamResponse alike", async () => {
    const route = createChatRoute({ createAgent: () => makeAgent() });
    const requests: [string, Request][] = [
      ["a null user part", post({ id: "c", messages: [{ role: "user", parts: [null] }] })],
      ["a null assistant part", post({ id: "c", messages: [{ role: "assistant", parts: [null, { type: "text" }] }] })],
      ["a part without a type", post({ id: "c", messages: [{ role: "user", parts: [{ text: "hi" }] }] })],
      ["a bad escape in a reconnect", new Request(`${API}/%E0%A4%A/stream`)],
      ["a bad escape in an event stream", new Request(`${API}/%ZZ/events`)],
    ];
    const answer = async (response: Response) => [response.status, ((await response.json()) as { error: { code: string } }).error.code];
    const got = [];
    for (const [name, request] of requests) got.push([name, await answer(await route.handle(request))]);
    got.push(["direct", await answer(await toUIMessageStreamResponse(makeAgent(), new Request(`${API}/%E0%A4%A/stream`)))]);
    expect(got).toEqual([...requests.map(([name]) => [name, [400, "invalid_request"]]), ["direct", [400, "invalid_request"]]]);
    route.close();
  });
});
