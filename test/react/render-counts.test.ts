// @vitest-environment happy-dom
/**
 * Selective re-renders: under a 3,000-delta response the transcript list renders 0 times during
 * the deltas and the streaming message at most once per delta batch (frames are driven by hand:
 * one every 100 deltas, as `requestAnimationFrame` would at ~100 deltas a frame).
 */
import { cleanup, render } from "@testing-library/react";
import { createElement as h } from "react";
import { afterEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/index.js";
import { scriptedModel, scriptedStreamFn, text } from "../../src/testing/index.js";
import { useAgentStatus, useAgentTranscript, useStreamingMessage, type BatchScheduler } from "../../src/react/index.js";

// Renders outside act(): React renders each store change as it would in the page (act would batch the whole run).
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = false;
afterEach(cleanup);

const textOf = (message: unknown) =>
  ((message as { content?: unknown })?.content as { type: string; text?: string }[] | undefined)?.map((part) => part.text ?? "").join("") ?? "";

describe("react: selective re-renders", () => {
  it("3,000 deltas: the transcript renders 0 times during them, the streaming message once per batch at most", async () => {
    const reply = "x".repeat(3000);
    const agent = new Agent({ streamFn: scriptedStreamFn([{ content: [text(reply)], chunkSize: 1 }]), initialState: { model: scriptedModel } });
    const frames: (() => void)[] = [];
    const schedule: BatchScheduler = (flush) => void frames.push(flush);
    let batches = 0;
    let deltas = 0;
    agent.subscribe((event) => {
      if (event.type !== "message_update" || event.assistantMessageEvent.type !== "text_delta") return;
      // A frame every 100 deltas runs the batches scheduled since the last one.
      if (++deltas % 100 === 0) for (const flush of frames.splice(0)) (batches++, flush());
    });
    const transcriptRenders: number[] = [];
    const streamingRenders: string[] = [];
    let statusRenders = 0;
    function Transcript() {
      const transcript = useAgentTranscript(agent, { schedule });
      transcriptRenders.push(transcript.length);
      return h("ul", null, transcript.map((message, index) => h("li", { key: index }, textOf(message))));
    }
    function Streaming() {
      const { message } = useStreamingMessage(agent, { schedule });
      streamingRenders.push(textOf(message));
      return h("p", { "data-testid": "streaming" }, textOf(message));
    }
    function Badge() {
      statusRenders++;
      return h("span", null, useAgentStatus(agent, { schedule }).value);
    }
    const view = render(h("div", null, h(Transcript), h(Streaming), h(Badge)));
    await agent.prompt("go");
    for (const flush of frames.splice(0)) flush();
    await new Promise<void>((resolve) => queueMicrotask(resolve));

    expect(deltas).toBe(3000);
    expect(batches).toBe(30);
    // Initial render, the prompt's end, the reply's end: never during the deltas.
    expect(transcriptRenders).toEqual([0, 1, 2]);
    // Initial, the prompt's start and end, the reply's start, at most one per batch, its end.
    expect(streamingRenders.length).toBeLessThanOrEqual(1 + 2 + 1 + batches + 1);
    // While the reply streams, each render shows more of it than the last.
    const reply_ = streamingRenders.slice(4, -1).map((rendered) => rendered.length);
    expect(reply_.every((length, i) => i === 0 || length > reply_[i - 1]!)).toBe(true);
    expect([streamingRenders.slice(0, 3), reply_.at(-1), streamingRenders.at(-1)]).toEqual([["", "go", ""], 3000, ""]);
    expect(statusRenders).toBeLessThan(20);
    expect(view.container.querySelectorAll("li")[1]!.textContent).toBe(reply);
  });
});
