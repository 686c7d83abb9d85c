/**
 * Issue 18 item 3 (groundwork for R70): the Anthropic provider delivers each call's
 * `toolcall_end` as soon as its `tool_use` block closes, while the response is still streaming,
 * through the real SDK: the server sends one complete block and then nothing (the connection
 * stays open), and the call's end arrives anyway.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { anthropicModel, anthropicStreamFn } from "../../src/providers/anthropic/index.js";
import { messageStart, stall, startSseServer, toolUseBlock, type SseServer } from "../support/sse-server.js";
import { API_KEY, contextOf, FIXTURE_MODEL_ID } from "./helpers.js";

let server: SseServer;
beforeAll(async () => {
  server = await startSseServer();
});
afterEach(() => server.clear());
afterAll(() => server.close());

describe("tool-call delivery while the response streams", () => {
  it("issue 18 item 3: toolcall_end arrives when its tool_use block closes, before the response ends", async () => {
    server.script(stall([messageStart(), ...toolUseBlock(0, "toolu_1", "read_file", ['{"path":', ' "a.txt"}'])]));
    const controller = new AbortController();
    const stream = await anthropicStreamFn({ baseURL: server.url, apiKey: API_KEY })(anthropicModel(FIXTURE_MODEL_ID), contextOf(), { signal: controller.signal });
    const seen: string[] = [];
    for await (const event of stream) {
      seen.push(event.type);
      if (event.type === "toolcall_end") {
        expect(event.toolCall).toEqual({ type: "toolCall", id: "toolu_1", name: "read_file", arguments: { path: "a.txt" } });
        // The response has not ended: the server is still holding the connection open.
        controller.abort();
      }
    }
    expect(seen.slice(0, 5)).toEqual(["start", "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_end"]);
    expect(seen.at(-1)).toBe("error");
    expect((await stream.result()).stopReason).toBe("aborted");
  });
});
