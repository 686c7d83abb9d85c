import { afterEach, describe, expect, it } from "vitest";
import { config } from "rxjs";
import { agentLoop, scriptedStreamFn, text } from "../../src/index.js";
import { baseConfig, user } from "./helpers.js";

describe("entry points: a consumer's bug stays the consumer's", () => {
  afterEach(() => {
    config.onUnhandledError = null;
  });

  it("a subscriber that throws, on buffered and live events, neither breaks the run nor throws into the caller", async () => {
    const reported: unknown[] = [];
    config.onUnhandledError = (error) => reported.push(error);
    const stream = agentLoop([user("hi")], { messages: [] }, baseConfig(), undefined, scriptedStreamFn([{ content: [text("ok")] }]));
    let seen = 0;
    expect(() =>
      stream.subscribe(() => {
        seen++;
        throw new Error("subscriber bug");
      }),
    ).not.toThrow();
    const messages = await stream.result();
    await new Promise((resolve) => setTimeout(resolve, 0)); // RxJS reports on a timer
    expect(messages.map((m) => (m as { role: string }).role)).toEqual(["user", "assistant"]);
    // RxJS unsubscribes a subscriber whose handler threw; each throw is reported, none reaches the loop.
    expect(reported.length).toBeGreaterThan(0);
    expect(reported.length).toBe(seen);
    expect((reported[0] as Error).message).toBe("subscriber bug");
  });
});
