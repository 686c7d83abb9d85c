/**
 * Differential checks: the same scenarios through pi-agent-core 1.6's `Agent` (run as a black box)
 * and ours, compared on what an app observes: the event sequence, the transcript, what each request
 * carried, and how prompt() settled.
 */
import { describe, expect, it } from "vitest";
import { Agent as ReferenceAgent } from "@earendil-works/pi-agent-core";
import { Agent, scriptedModel, scriptedStreamFn, text, toolCall, type AgentEvent, type AgentTool, type QueueMode } from "../../src/index.js";
import type { Script } from "../../src/index.js";
import { logEntry, ok, summary, tool, untilAborted } from "../loop/helpers.js";
import { requestTails, says } from "./helpers.js";

/** What both Agents are driven through. */
interface Driver {
  prompt(text: string): Promise<void>;
  continue(): Promise<void>;
  steer(message: unknown): void;
  followUp(message: unknown): void;
  abort(): void;
  subscribe(listener: (event: AgentEvent) => unknown): () => void;
  state: { messages: unknown[] };
}

interface Options {
  tools?: AgentTool[];
  systemPrompt?: string;
  messages?: unknown[];
  mode?: QueueMode;
}

type Drive = (agent: Driver) => Promise<void>;

async function observe(kind: "reference" | "ours", script: Script, options: Options, drive: Drive) {
  const stream = scriptedStreamFn(script);
  const init = {
    initialState: {
      model: scriptedModel,
      systemPrompt: options.systemPrompt,
      tools: options.tools,
      ...(options.messages ? { messages: options.messages } : {}),
    },
    streamFn: stream,
    steeringMode: options.mode,
    followUpMode: options.mode,
  };
  const agent = (kind === "reference" ? new ReferenceAgent(init as never) : new Agent(init as never)) as unknown as Driver;
  const log: string[] = [];
  agent.subscribe((event) => {
    if (event.type !== "message_update") log.push(logEntry(event));
  });
  let outcome = "resolved";
  try {
    await drive(agent);
  } catch (error) {
    outcome = `rejected: ${(error as Error).message}`;
  }
  return { log, outcome, transcript: agent.state.messages.map((m) => summary(m as never)), requests: requestTails(stream) };
}

async function compare(script: () => Script, options: Options, drive: Drive) {
  const reference = await observe("reference", script(), options, drive);
  const ours = await observe("ours", script(), options, drive);
  expect(ours).toEqual(reference);
  return ours;
}

const answer = (value: string) => ({ content: [text(value)] });

describe("differential: pi-agent-core 1.6 Agent vs ours", () => {
  it("a tool turn with a system prompt and declared tools", async () => {
    const result = await compare(
      () => [{ content: [text("let me look"), toolCall("read", {}, "c1"), toolCall("write", {}, "c2")] }, answer("done")],
      { systemPrompt: "You are terse.", tools: [tool("read"), tool("write")] },
      (agent) => agent.prompt("go"),
    );
    expect(result.transcript.at(-1)).toBe("assistant(stop)[done]");
  });

  it.each(["all", "one-at-a-time"] as const)("steering and follow-ups queued before the prompt (%s)", async (mode) => {
    await compare(
      () => () => answer("ok"),
      { mode },
      async (agent) => {
        agent.steer(says("s1"));
        agent.steer(says("s2"));
        agent.followUp(says("f1"));
        agent.followUp(says("f2"));
        await agent.prompt("p");
      },
    );
  });

  it("continue() from an assistant tail: steering first, then the rest of the queues", async () => {
    await compare(
      () => () => answer("ok"),
      {},
      async (agent) => {
        await agent.prompt("p");
        agent.steer(says("s1"));
        agent.steer(says("s2"));
        agent.followUp(says("f1"));
        await agent.continue();
        await agent.continue().catch(() => agent.prompt("after"));
      },
    );
  });

  it("abort() while a tool runs", async () => {
    const slow = () =>
      tool("slow", async (_id, _args, signal) => {
        await untilAborted(signal);
        return ok("stopped");
      });
    const tools = [slow()];
    await compare(
      () => [{ content: [toolCall("slow", {}, "c1")] }, answer("never")],
      { tools },
      async (agent) => {
        agent.subscribe((event) => {
          if (event.type === "tool_execution_start") queueMicrotask(() => agent.abort());
        });
        await agent.prompt("go");
      },
    );
  });

  it("a listener that throws once, at the assistant's message_end (agent_end differs on purpose)", async () => {
    const script = () => [answer("hello")];
    const drive: Drive = async (agent) => {
      let thrown = false;
      agent.subscribe((event) => {
        if (!thrown && event.type === "message_end" && (event.message as { role: string }).role === "assistant") {
          thrown = true;
          throw new Error("listener bug");
        }
      });
      await agent.prompt("go");
    };
    const reference = await observe("reference", script(), {}, drive);
    const ours = await observe("ours", script(), {}, drive);
    // The reference's agent_end lists only the failure message; ours lists every message whose
    // message_end went out in this run (R12), as after any other failure.
    expect(reference.log.at(-1)).toBe("agent_end:1");
    expect(ours.log.at(-1)).toBe("agent_end:3");
    expect({ ...ours, log: ours.log.slice(0, -1) }).toEqual({ ...reference, log: reference.log.slice(0, -1) });
  });
});
