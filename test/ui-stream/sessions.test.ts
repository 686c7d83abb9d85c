import { afterEach, describe, expect, it, vi } from "vitest";
import { Agent } from "../../src/index.js";
import { pause, scriptedModel, scriptedStreamFn, text } from "../../src/testing/index.js";
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

  it("a stop, a queued message or an approval decision for a chat not open answers as an idle session would, without opening one", async () => {
    const opened: string[] = [];
    const route = createChatRoute({ createAgent: (chatId) => (opened.push(chatId), new Agent({ streamFn: scriptedStreamFn([{ content: [text("one")] }]), initialState: { model: scriptedModel } })) });
    const post = (body: unknown) => route.handle(new Request("http://chat.test/api/chat", { method: "POST", body: JSON.stringify(body) }));
    const answer = async (response: Response) => [response.status, await response.json()];
    const approvalAnswer = { id: "never-seen", messages: [{ role: "assistant", parts: [{ type: "dynamic-tool", state: "approval-responded", approval: { id: "a1", approved: true } }] }] };
    const got = [
      await answer(await post({ id: "never-seen", action: "stop" })),
      ...(await Promise.all(
        [{ id: "never-seen", action: "steer", text: "x" }, { id: "never-seen", action: "followUp", text: "x" }, approvalAnswer, { id: "never-seen", action: "approve", approvalId: "a1" }, { id: "never-seen", action: "reject", approvalId: "a1", reason: "no" }].map(
          async (body) => ((await answer(await post(body))) as [number, { error: { code: string } }]).map((part, i) => (i === 0 ? part : (part as { error: { code: string } }).error.code)),
        ),
      )),
    ];
    expect([got, opened]).toEqual([
      [[200, { stopped: false }], [409, "no_active_run"], [409, "no_active_run"], [409, "no_active_run"], [409, "unknown_approval"], [409, "unknown_approval"]],
      [],
    ]);
    // A new message opens the chat.
    await (await route.handle(prompt("never-seen"))).text();
    expect(opened).toEqual(["never-seen"]);
    route.close();
  });

  it("a stop sent while the chat's session is still opening waits for it and stops the run it opened", async () => {
    let opened!: () => void;
    const opening = new Promise<void>((resolve) => (opened = resolve));
    const route = createChatRoute({
      createAgent: async () => {
        await opening;
        return new Agent({ streamFn: scriptedStreamFn([{ content: [pause(60_000), text("never")] }]), initialState: { model: scriptedModel } });
      },
    });
    const streaming = route.handle(prompt("slow"));
    const stop = route.handle(new Request("http://chat.test/api/chat", { method: "POST", body: JSON.stringify({ id: "slow", action: "stop" }) }));
    opened();
    const response = await streaming;
    expect(await (await stop).json()).toEqual({ stopped: true });
    await response.text();
    expect(route.agent("slow")!.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "aborted" });
    route.close();
  });

  it("a body whose stream fails while it is read (the client went away) is a 400, not a rejection", async () => {
    const route = createChatRoute({ createAgent: () => new Agent({ streamFn: scriptedStreamFn([]), initialState: { model: scriptedModel } }) });
    const failing = new ReadableStream<Uint8Array>({ pull: (controller) => controller.error(new Error("client went away")) });
    const response = await route.handle(new Request("http://chat.test/api/chat", { method: "POST", body: failing, duplex: "half" } as RequestInit));
    expect([response.status, ((await response.json()) as { error: { code: string } }).error.code]).toEqual([400, "invalid_request"]);
    route.close();
  });
});
