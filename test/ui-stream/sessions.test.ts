import { afterEach, describe, expect, it, vi } from "vitest";
import { Agent } from "../../src/index.js";
import { scriptedModel, scriptedStreamFn, text } from "../../src/testing/index.js";
import { createChatRoute } from "../../src/ui-stream/index.js";

afterEach(() => void vi.useRealTimers());

const prompt = (id: string) =>
  new Request("http://chat.test/api/chat", { method: "POST", body: JSON.stringify({ id, messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }] }) });

describe("createChatRoute: one open Agent per chat id", () => {
  it("opens an Agent per chat once, reuses it, and releases it after idleTimeoutMs without a run or a request", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const opened: string[] = [];
    const route = createChatRoute({
      idleTimeoutMs: 60_000,
      createAgent: (chatId) => {
        opened.push(chatId);
        return new Agent({ streamFn: scriptedStreamFn([{ content: [text("one")] }, { content: [text("two")] }]), initialState: { model: scriptedModel } });
      },
    });
    await (await route.handle(prompt("a"))).text();
    const first = route.agent("a");
    await first!.waitForIdle();
    await (await route.handle(prompt("a"))).text();
    await first!.waitForIdle();
    expect([opened, route.agent("a") === first, first!.state.messages.length]).toEqual([["a"], true, 4]);
    vi.advanceTimersByTime(59_999);
    expect(route.agent("a")).toBe(first);
    vi.advanceTimersByTime(1);
    expect(route.agent("a")).toBeUndefined();
    // A reconnect to a released chat has nothing live to attach to.
    expect((await route.handle(new Request("http://chat.test/api/chat/a/stream"))).status).toBe(204);
    route.close();
  });
});
