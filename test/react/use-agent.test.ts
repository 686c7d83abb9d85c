// @vitest-environment happy-dom
/** useAgent: the session's phase, pending approvals (R82) and queues (R53) in a component, and its actions. */
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { createElement as h } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { Agent, defineTool } from "../../src/index.js";
import { scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/testing/index.js";
import { useAgent, useAgentStatus, useStreamingMessage, type BatchScheduler } from "../../src/react/index.js";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = false;
afterEach(cleanup);

describe("react: useAgent", () => {
  it("R82/R53: a card per pending approval; approve and reject from the page; a prompt during the run is steered, not a second run", async () => {
    const tool = (name: string) =>
      defineTool({ name, description: name, parameters: z.object({}), needsApproval: true, execute: async () => ({ content: [{ type: "text", text: `${name} ran` }], details: {} }) });
    const streamFn = scriptedStreamFn([{ content: [toolCall("write", {}, "w"), toolCall("deploy", {}, "d")] }, { content: [text("Done.")] }]);
    const agent = new Agent({ streamFn, initialState: { model: scriptedModel, tools: [tool("write"), tool("deploy")] } });
    const phases: string[] = [];
    function Chat() {
      const chat = useAgent(agent, { schedule: (flush) => queueMicrotask(flush) });
      if (phases.at(-1) !== chat.state.value) phases.push(chat.state.value);
      return h(
        "div",
        null,
        h("span", { "data-testid": "state" }, chat.state.value),
        h("span", { "data-testid": "queued" }, String(chat.state.queues.steering.length)),
        chat.state.pendingApprovals.map((request) =>
          h("div", { key: request.approvalId }, request.toolName, h("button", { onClick: () => (request.toolName === "write" ? chat.approve(request.approvalId) : chat.reject(request.approvalId, "No")) }, `decide ${request.toolName}`)),
        ),
        h("button", { onClick: () => void chat.prompt("Also this") }, "send"),
        h("ol", null, chat.transcript.map((message, index) => h("li", { key: index }, message.role))),
      );
    }
    render(h(Chat));
    const run = agent.prompt("Ship it");
    await screen.findByText("decide deploy");
    expect(screen.getByTestId("state").textContent).toBe("awaitingApproval");
    fireEvent.click(screen.getByText("send"));
    expect(screen.getByTestId("queued").textContent).toBe("1");
    fireEvent.click(screen.getByText("decide write"));
    fireEvent.click(screen.getByText("decide deploy"));
    await run;
    await screen.findByText("idle");
    expect(phases).toEqual(["idle", "running", "streaming", "running", "executingTools", "awaitingApproval", "executingTools", "running", "streaming", "running", "idle"]);
    expect([...screen.getAllByRole("listitem")].map((item) => item.textContent)).toEqual(["system", "user", "assistant", "toolResult", "toolResult", "user", "assistant"]);
    expect(agent.state.messages.filter((message) => message.role === "toolResult").map((message) => (message as { isError: boolean }).isError)).toEqual([false, true]);
  });
});

describe("react: a component (re)mounted after its Agent moved on", () => {
  function Chat({ agent }: { agent: Agent }) {
    const chat = useAgent(agent);
    return h("span", { "data-testid": "chat" }, `${chat.state.value} ${chat.transcript.length} ${chat.state.lastEndReason}`);
  }
  const shown = () => screen.getByTestId("chat").textContent;

  it("unmounted mid-run, remounted after the run ended: it shows the Agent as it is now, not as it was", async () => {
    const agent = new Agent({ streamFn: scriptedStreamFn([{ content: [text("alpha beta gamma delta")], delayMs: 20 }]), initialState: { model: scriptedModel } });
    const first = render(h(Chat, { agent }));
    const run = agent.prompt("hi");
    await screen.findByText("streaming 1 undefined");
    first.unmount();
    await run;
    render(h(Chat, { agent }));
    expect([shown(), agent.state.messages.length]).toEqual(["idle 2 completed", 2]);
  });

  it("unmounted while idle, a whole run in between, remounted: it shows that run", async () => {
    const agent = new Agent({ streamFn: scriptedStreamFn([{ content: [text("one")] }]), initialState: { model: scriptedModel } });
    render(h(Chat, { agent })).unmount();
    await agent.prompt("first");
    render(h(Chat, { agent }));
    expect(shown()).toBe("idle 2 completed");
  });
});

describe("react: one batching per Agent (its hooks share one store)", () => {
  const agentFor = () => new Agent({ streamFn: scriptedStreamFn([{ content: [text("a b c d e f g h")], chunkSize: 2 }]), initialState: { model: scriptedModel } });

  it("a `schedule` given to a hook is used even when a hook given none made the Agent's store first", async () => {
    const agent = agentFor();
    let scheduled = 0;
    const schedule: BatchScheduler = (flush) => (scheduled++, queueMicrotask(flush));
    function Status() {
      return h("span", null, useAgentStatus(agent).value);
    }
    function Streaming() {
      return h("p", null, String(useStreamingMessage(agent, { schedule }).version));
    }
    render(h("div", null, h(Status), h(Streaming)));
    await agent.prompt("hi");
    expect(scheduled).toBeGreaterThan(0);
  });

  it("hooks of one Agent given different schedules: a console warning, once; the one given last batches", async () => {
    const agent = agentFor();
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const used: string[] = [];
    const first: BatchScheduler = (flush) => (used.push("first"), queueMicrotask(flush));
    const second: BatchScheduler = (flush) => (used.push("second"), setTimeout(flush, 0));
    function Reader({ schedule }: { schedule: BatchScheduler }) {
      return h("p", null, String(useStreamingMessage(agent, { schedule }).version));
    }
    try {
      const view = render(h("div", null, h(Reader, { schedule: first }), h(Reader, { schedule: second })));
      view.rerender(h("div", null, h(Reader, { schedule: first }), h(Reader, { schedule: second })));
      await agent.prompt("hi");
      expect([warn.mock.calls.length, new Set(used)]).toEqual([1, new Set(["second"])]);
    } finally {
      warn.mockRestore();
    }
  });

  it("a component that gives a new inline `schedule` at each render is no conflict", async () => {
    const agent = agentFor();
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    function Reader() {
      return h("p", null, String(useStreamingMessage(agent, { schedule: (flush) => queueMicrotask(flush) }).version));
    }
    try {
      render(h("div", null, h(Reader), h(Reader)));
      await agent.prompt("hi");
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });
});
