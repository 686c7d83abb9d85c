/**
 * SPEC R100 with R13: a run asking for a structured answer, persisted after every macrostep (of the
 * run and of each tool call), JSON round-tripped and restored with fresh implementations, finishes
 * as the uninterrupted run: same messages, same `agent_end` (reason and output), the same output on
 * the actor. The answer is validated in its call's preflight (`preflightingCalls`) and handed back
 * by its `execute` (replay-safe): both are restore points here.
 */
import { describe, expect, it } from "vitest";
import { createActor, toPromise, type AnyActorRef } from "xstate";
import { z } from "zod";
import { agentEvents, createAgentRunLogic, scriptedStreamFn, text, toolCall, type AgentRunOptions, type AnyAgentEvent } from "../../src/index.js";
import { fixedClock, userMessage } from "../restore/scenario.js";
import { baseConfig, ok, tool } from "../loop/helpers.js";

const schema = z.object({ city: z.string(), population: z.number() });

/** Fresh implementations: the model answers from the transcript (so a re-issued request answers the same). */
function options(): AgentRunOptions {
  const streamFn = scriptedStreamFn((call) => {
    const turns = call.context.messages.filter((m) => m.role === "assistant").length;
    if (turns === 0) return { content: [text("Looking it up."), toolCall("lookup", {}, "l1"), toolCall("final_answer", { city: "Paris" }, "f1")] };
    if (turns === 1) return { content: [text("Without a tool.")] };
    return { content: [toolCall("final_answer", { city: "Paris", population: "2100000" }, "f2")] };
  });
  return {
    streamFn,
    tools: [tool("lookup", async () => ok("2.1M"), { replay: "safe" })],
    config: baseConfig({ output: { schema } }),
    clock: fixedClock,
  };
}

const input = () => ({ prompts: [userMessage("Largest city of France?")], messages: [] });
/** Timestamps and durations aside (the scripted model stamps its messages with the wall clock). */
const comparable = (value: unknown) => JSON.parse(JSON.stringify(value, (key, entry) => (key === "durationMs" || key === "timestamp" ? undefined : entry)));

describe("R100 + R13: a run restored while it validates finishes the same way", () => {
  it("R100, R13: every restore point finishes with the same answer, messages and agent_end", async () => {
    const actor = createActor(createAgentRunLogic(options()), { input: input() });
    const events: AnyAgentEvent[] = [];
    agentEvents(actor).subscribe((event) => events.push(event));
    const points: { snapshot: string; state: string }[] = [];
    const persist = () => {
      const snapshot = actor.getSnapshot();
      if (snapshot.status === "active") points.push({ snapshot: JSON.stringify(actor.getPersistedSnapshot()), state: JSON.stringify(snapshot.value) });
    };
    actor.subscribe(persist);
    actor.system.inspect((event) => {
      if (event.type === "@xstate.snapshot" && event.actorRef !== actor && String((event.actorRef as AnyActorRef).id).startsWith("tool:")) queueMicrotask(persist);
    });
    actor.start();
    const output = await toPromise(actor);
    const end = events.at(-1) as Extract<AnyAgentEvent, { type: "agent_end" }>;
    expect([end.reason, end.output, output.output]).toEqual(["completed", { city: "Paris", population: 2100000 }, { city: "Paris", population: 2100000 }]);
    // Restore points inside the answer's validation and while it is handed back, and at the reminder's turn.
    expect(points.some((point) => point.state.includes("preflightingCalls"))).toBe(true);
    expect(points.some((point) => point.state.includes("runningInParallel"))).toBe(true);
    expect(points.length).toBeGreaterThan(10);

    for (const point of points) {
      const restored = createActor(createAgentRunLogic(options()), { snapshot: JSON.parse(point.snapshot), input: input() });
      const later: AnyAgentEvent[] = [];
      agentEvents(restored).subscribe((event) => later.push(event));
      restored.start();
      const restoredOutput = await toPromise(restored);
      const restoredEnd = later.at(-1) as Extract<AnyAgentEvent, { type: "agent_end" }>;
      expect({ at: point.state, messages: comparable(restoredOutput), output: restoredOutput.output, reason: restoredEnd.reason, end: restoredEnd.output }).toEqual({
        at: point.state,
        messages: comparable(output),
        output: output.output,
        reason: "completed",
        end: end.output,
      });
    }
  });
});
