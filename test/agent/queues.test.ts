import { describe, expect, it } from "vitest";
import { text, toolCall, type QueueMode } from "../../src/index.js";
import { tool } from "../loop/helpers.js";
import { requestTails, says, scenario } from "./helpers.js";

const answer = (value: string) => ({ content: [text(value)] });
const always = () => answer("ok");

/** Queues two steering and two follow-up messages before the prompt, with both queues in `mode`. */
async function queuedBeforePrompt(mode: QueueMode) {
  const run = scenario(always, { steeringMode: mode, followUpMode: mode });
  run.agent.steer(says("s1"));
  run.agent.steer(says("s2"));
  run.agent.followUp(says("f1"));
  run.agent.followUp(says("f2"));
  await run.agent.prompt("p");
  return run;
}

describe("R53: queues", () => {
  it('R53: "all" drains each queue in one batch: steering at the start, follow-ups when the run would stop', async () => {
    const { stream, agent } = await queuedBeforePrompt("all");
    expect(requestTails(stream)).toEqual([
      ["p", "s1", "s2"],
      ["f1", "f2"],
    ]);
    expect(agent.hasQueuedMessages()).toBe(false);
  });

  it('R53: "one-at-a-time" takes one message per drain point, over several turns', async () => {
    const { stream, agent } = await queuedBeforePrompt("one-at-a-time");
    expect(requestTails(stream)).toEqual([["p", "s1"], ["s2"], ["f1"], ["f2"]]);
    expect(agent.hasQueuedMessages()).toBe(false);
  });

  it("R53: steering queued during a turn is injected after its tools, before the next request", async () => {
    const { agent, stream, log } = scenario([{ content: [toolCall("read")] }, answer("done")], {}, { tools: [tool("read")] });
    agent.subscribe((event) => {
      if (event.type === "tool_execution_start") agent.steer(says("actually, stop"));
    });
    await agent.prompt("go");
    expect(requestTails(stream)).toEqual([["go"], ["actually, stop"]]);
    expect(log.slice(8, 13)).toEqual([
      "message_start:toolResult(read)",
      "message_end:toolResult(read)",
      "turn_end:assistant(toolUse)+1",
      "turn_start",
      "message_start:user(actually, stop)",
    ]);
  });

  it("R53: a follow-up queued during the run runs after it would otherwise stop", async () => {
    const { agent, stream } = scenario(always);
    agent.subscribe((event) => {
      if (event.type === "agent_start") agent.followUp(says("and then?"));
    });
    await agent.prompt("go");
    expect(requestTails(stream)).toEqual([["go"], ["and then?"]]);
  });

  it("R53: peekQueuedMessages shows what the next drain takes (steering first, per mode) without taking it", () => {
    const { agent } = scenario(always);
    expect(agent.peekQueuedMessages()).toEqual([]);
    agent.followUp(says("f1"));
    agent.followUp(says("f2"));
    expect(agent.peekQueuedMessages()).toEqual([says("f1")]);
    agent.followUpMode = "all";
    expect(agent.peekQueuedMessages()).toEqual([says("f1"), says("f2")]);
    agent.steer(says("s1"));
    expect(agent.peekQueuedMessages()).toEqual([says("s1")]);
    expect(agent.followUpMode).toBe("all");
    expect(agent.hasQueuedMessages()).toBe(true);
  });

  it("R53: clearing one queue or both", () => {
    const { agent } = scenario(always);
    agent.steer(says("s"));
    agent.followUp(says("f"));
    agent.clearSteeringQueue();
    expect(agent.peekQueuedMessages()).toEqual([says("f")]);
    agent.steer(says("s"));
    agent.clearFollowUpQueue();
    expect(agent.peekQueuedMessages()).toEqual([says("s")]);
    agent.followUp(says("f"));
    agent.clearAllQueues();
    expect(agent.hasQueuedMessages()).toBe(false);
  });

  it("R53: the queues are plain data in the session machine's context", () => {
    const { agent } = scenario(always, { steeringMode: "all" });
    agent.steer(says("s"));
    agent.followUp(says("f"));
    const context = agent.actor.getSnapshot().context;
    expect(context.queues).toEqual({ steering: [says("s")], followUp: [says("f")] });
    expect(context.modes).toEqual({ steering: "all", followUp: "one-at-a-time" });
    expect(JSON.parse(JSON.stringify(agent.actor.getPersistedSnapshot()))).toMatchObject({ context: { queues: context.queues } });
  });
});
