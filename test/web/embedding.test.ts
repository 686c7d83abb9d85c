import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, defineTool, scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/index.js";

// docs/guides/embedding.md, "Watch an Agent" (Node), verbatim but for `log` instead of console.log, and the assertions.
describe("README: Embedding", () => {
  it("runs the Node example: events say what happened, actor snapshots where the loop is", async () => {
    const log: string[] = [];
    const console = { log: (...args: unknown[]) => log.push(args.join(" ")) };

    const clock = defineTool({
      name: "clock",
      description: "The current time",
      parameters: z.object({}),
      execute: async () => ({ content: [{ type: "text", text: "12:00" }], details: {} }),
    });

    const agent = new Agent({
      // The model: scripted here; anthropicStreamFn() from "xstate-agent-loop/anthropic" talks to Claude.
      streamFn: scriptedStreamFn([{ content: [toolCall("clock")] }, { content: [text("It is noon.")] }]),
      initialState: { systemPrompt: "You are terse.", model: scriptedModel, tools: [clock] },
    });

    // What happened: the AgentEvents (pi-compatible), each awaited before the run goes on.
    agent.subscribe((event) => {
      if (event.type === "tool_execution_end") console.log("tool:", event.toolName, event.isError ? "failed" : "ok");
      if (event.type === "agent_end") console.log("added", event.messages.length, "messages");
    });

    // Where the loop is: the session actor invokes one run actor per prompt; tool calls are its children.
    let watched: unknown;
    agent.actor.subscribe((session) => {
      const run = session.children.run; // the invoked run machine, while busy
      if (!run || run === watched) return;
      watched = run;
      run.subscribe((snapshot) => console.log("run:", JSON.stringify(snapshot.value))); // tool calls: snapshot.children["tool:0"], …
    });

    await agent.prompt("What time is it?");
    console.log("session:", agent.actor.getSnapshot().value);

    // The run's states as it goes (exact names: see visualizations/run.machine.svg), then the end.
    const running = 'run: {"turn":{"executingTools":"runningInParallel"}}';
    expect(log).toContain('run: {"turn":{"requesting":"streaming"}}');
    expect(log).toContain(running);
    expect(log.indexOf("tool: clock ok")).toBeGreaterThan(log.indexOf(running));
    expect(log.slice(-3)).toEqual(["added 4 messages", 'run: "done"', "session: idle"]);
  });
});
