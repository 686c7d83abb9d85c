import { describe, expect, it } from "vitest";
import { Agent as PiAgent } from "@earendil-works/pi-agent-core";
import { Agent, scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/index.js";
import { ok, structureProblems, summary, tool } from "../loop/helpers.js";
import { roles, scenario } from "./helpers.js";

const answer = (value: string) => ({ content: [text(value)] });

describe("R51: listeners", () => {
  it("R51: listeners are awaited in registration order for every event", async () => {
    const { agent, note, log } = scenario([answer("a")]);
    agent.subscribe(async (event) => {
      if (event.type !== "agent_start" && event.type !== "agent_end") return;
      await new Promise((resolve) => setTimeout(resolve, 5));
      note(`slow:${event.type}`);
    });
    agent.subscribe((event) => {
      if (event.type === "agent_start" || event.type === "agent_end") note(`fast:${event.type}`);
    });
    await agent.prompt("go");
    expect(log.filter((entry) => entry.includes("agent_"))).toEqual([
      "agent_start",
      "slow:agent_start",
      "fast:agent_start",
      "agent_end:2",
      "slow:agent_end",
      "fast:agent_end",
    ]);
  });

  it("R51: an assistant message_end listener is a barrier before tool preflight", async () => {
    const read = tool("read", async () => ok("read"), {
      prepareArguments: (args) => {
        note("prepareArguments");
        return args;
      },
    });
    const { agent, note, log } = scenario([{ content: [toolCall("read")] }, answer("done")], {}, { tools: [read] });
    agent.beforeToolCall = async () => {
      note("beforeToolCall");
      return undefined;
    };
    agent.subscribe(async (event) => {
      if (event.type !== "message_end" || (event.message as { role: string }).role !== "assistant") return;
      note("listener:start");
      // A listener that takes a while (persisting the message, say): preflight must wait for it.
      await new Promise((resolve) => setTimeout(resolve, 20));
      note("listener:end");
    });
    await agent.prompt("go");
    const barrier = log.filter((entry) => entry.startsWith("listener:") || entry === "prepareArguments" || entry === "beforeToolCall");
    expect(barrier.slice(0, 4)).toEqual(["listener:start", "listener:end", "prepareArguments", "beforeToolCall"]);
    expect(log.indexOf("listener:start")).toBe(log.indexOf("message_end:assistant(toolUse)") + 1);
  });

  // Updates reach a single listener without the map's iterator (issue 40); the listeners it
  // subscribes or unsubscribes meanwhile still get what the reference's live iteration gives them.
  it.each([
    ["sync", false],
    ["async", true],
  ])("R51: a listener that subscribes, unsubscribes or re-subscribes listeners during an update (%s): the same deliveries as the reference", async (_, awaits) => {
    const choreography = async (AgentClass: typeof Agent | typeof PiAgent) => {
      const agent = new AgentClass({ streamFn: scriptedStreamFn([{ content: [text("abcdefgh")], chunkSize: 1 }]) as never, initialState: { model: scriptedModel as never } });
      const log: string[] = [];
      let updates = 0;
      const listener = (name: string) => (event: { type: string }) => {
        if (event.type !== "message_update") return;
        log.push(`${name}:${updates}`);
        return awaits ? Promise.resolve() : undefined;
      };
      const second = listener("second");
      const third = listener("third");
      let unsubscribeFirst = () => {};
      let unsubscribeSecond = () => {};
      const first = (event: { type: string }) => {
        if (event.type !== "message_update") return;
        updates++;
        log.push(`first:${updates}`);
        // Call 2 (alone): adds a second listener; 3: removes it; 4 (alone): unsubscribes itself and
        // subscribes again (now after its old place); 6 (alone): subscribes itself again while
        // subscribed (it keeps its place) and adds a third.
        if (updates === 2) unsubscribeSecond = agent.subscribe(second as never);
        if (updates === 3) unsubscribeSecond();
        if (updates === 4) {
          unsubscribeFirst();
          unsubscribeFirst = agent.subscribe(first as never);
        }
        if (updates === 6) {
          agent.subscribe(first as never);
          agent.subscribe(third as never);
        }
        return awaits ? Promise.resolve() : undefined;
      };
      unsubscribeFirst = agent.subscribe(first as never);
      await agent.prompt("go");
      return log;
    };
    const ours = await choreography(Agent);
    expect(ours).toEqual(await choreography(PiAgent));
    expect(ours.length).toBeGreaterThan(8);
  });

  it("R51: unsubscribing stops delivery", async () => {
    const { agent } = scenario([answer("a"), answer("b")]);
    const seen: string[] = [];
    const unsubscribe = agent.subscribe((event) => void seen.push(event.type));
    await agent.prompt("one");
    unsubscribe();
    await agent.prompt("two");
    expect(seen.filter((type) => type === "agent_end")).toHaveLength(1);
  });
});

describe("R55: failures end the run cleanly", () => {
  it("R55: a stream function that throws ends with a failure message; prompt() resolves", async () => {
    const { agent, log, events } = scenario([{ throws: { message: "socket hang up" } }]);
    await expect(agent.prompt("go")).resolves.toBeUndefined();
    expect(log.slice(-4)).toEqual([
      "message_start:assistant",
      "message_end:assistant(error)",
      "turn_end:assistant(error)+0",
      "agent_end:2",
    ]);
    expect(structureProblems(events)).toEqual([]);
    expect(agent.state.errorMessage).toBe("socket hang up");
    expect(agent.state.isStreaming).toBe(false);
  });

  it("R55: a tool that throws yields an error result; prompt() resolves", async () => {
    const broken = tool("broken", async () => {
      throw new Error("disk full");
    });
    const { agent } = scenario([{ content: [toolCall("broken")] }, answer("sorry")], {}, { tools: [broken] });
    await agent.prompt("go");
    expect(agent.state.messages.slice(-2).map(summary)).toEqual(["toolResult(broken!):disk full", "assistant(stop)[sorry]"]);
  });

  it("R55: a listener that throws stops the run: the started call's aborted result, failure message, turn_end and agent_end, then idle", async () => {
    let toolSignal: AbortSignal | undefined;
    const slow = tool("slow", async (_id, _args, signal, onUpdate) => {
      toolSignal = signal;
      onUpdate?.(ok("working"));
      await new Promise<void>((resolve) => signal?.addEventListener("abort", () => resolve(), { once: true }));
      return ok("stopped");
    });
    const { agent, log, events } = scenario([{ content: [toolCall("slow")] }, answer("never")], {}, { tools: [slow] });
    agent.subscribe((event) => {
      if (event.type === "tool_execution_update") throw new Error("listener bug");
    });
    await expect(agent.prompt("go")).resolves.toBeUndefined();
    // SPEC R55: no call is left without its result, so the transcript stays valid for any provider.
    expect(log.slice(-9)).toEqual([
      "tool_start:slow",
      "tool_update:slow",
      "tool_end:slow!",
      "message_start:toolResult(slow!)",
      "message_end:toolResult(slow!)",
      "message_start:assistant",
      "message_end:assistant(error)",
      "turn_end:assistant(error)+0",
      "agent_end:4",
    ]);
    expect(structureProblems(events)).toEqual([]);
    // Running tools see the abort, as with a throwing sink in runAgentLoop (R56).
    expect(toolSignal?.aborted).toBe(true);
    expect(roles(agent.state.messages)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
    expect(agent.state.messages.at(-2)).toMatchObject({ role: "toolResult", isError: true, content: [{ type: "text", text: "Operation aborted" }] });
    expect(agent.state.messages.at(-1)).toMatchObject({ stopReason: "error", errorMessage: "listener bug" });
    expect(agent.state.isStreaming).toBe(false);
  });

  it("R55: a listener that throws once at tool_execution_start: the started call still gets its result, before the failure message", async () => {
    const { agent } = scenario([{ content: [toolCall("slow")] }, answer("never")], {}, { tools: [tool("slow", async () => ok("done"))] });
    let thrown = false;
    agent.subscribe((event) => {
      if (event.type === "tool_execution_start" && !thrown) {
        thrown = true;
        throw new Error("listener bug");
      }
    });
    await agent.prompt("go");
    // Issue 15 item 11: never `assistant:toolUse` without a result (other providers reject such a transcript).
    expect(roles(agent.state.messages)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
    expect(agent.state.messages.at(-2)).toMatchObject({ role: "toolResult", isError: true, content: [{ type: "text", text: "Operation aborted" }] });
    expect(agent.state.messages.at(-1)).toMatchObject({ stopReason: "error", errorMessage: "listener bug" });
  });

  it("R55: a listener that throws at the next turn's assistant message: no result for a call of that turn it never saw start (call ids recur across turns)", async () => {
    // Both turns call `read` with the same id; the listener throws before the second one starts.
    const call = { type: "toolCall" as const, id: "same", name: "read", arguments: {} };
    const { agent, events } = scenario([{ content: [call] }, { content: [call] }, answer("never")], {}, { tools: [tool("read")] });
    let assistants = 0;
    agent.subscribe((event) => {
      if (event.type === "message_end" && event.message.role === "assistant" && ++assistants === 2) throw new Error("listener bug");
    });
    await agent.prompt("go");
    expect(roles(agent.state.messages)).toEqual(["system", "user", "assistant", "toolResult", "assistant", "assistant"]);
    expect(events.filter((event) => event.type === "tool_execution_end")).toHaveLength(1);
    expect(structureProblems(events)).toEqual([]);
  });

  it("R55: a listener that keeps throwing makes prompt() reject with its error (as the reference does)", async () => {
    const { agent } = scenario([answer("a")]);
    agent.subscribe((event) => {
      if (event.type === "message_end") throw new Error("always");
    });
    await expect(agent.prompt("go")).rejects.toThrow("always");
    expect(agent.state.isStreaming).toBe(false);
    await expect(agent.waitForIdle()).resolves.toBeUndefined();
  });

  it("R55: a defect inside the run actor still ends with a failure message, turn_end and agent_end", async () => {
    const { agent, log, events } = scenario([answer("a")]);
    // Not a message: the run machine's injection step throws on it, failing the run actor itself.
    // (`agent.steer(null)` is refused at the call since issue 15, so it goes to the session directly.)
    agent.actor.send({ type: "queue.steer", message: null as never });
    await expect(agent.prompt("go")).resolves.toBeUndefined();
    expect(log.slice(-4)).toEqual([
      "message_start:assistant",
      "message_end:assistant(error)",
      "turn_end:assistant(error)+0",
      "agent_end:2",
    ]);
    expect(structureProblems(events)).toEqual([]);
    // The session survives: the next prompt runs normally.
    await agent.prompt("again");
    expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
  });
});
