/**
 * SPEC R13: a run persisted after every transition, JSON round-tripped and restored with fresh
 * implementations finishes as the uninterrupted run would: same output, same events after the
 * restore point (except the results of calls R13 interrupts), one result per call, and a tool
 * without `replay: "safe"` never executes twice (a sub-agent in flight follows its tool's rule).
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createActor, toPromise, type AnyActorRef } from "xstate";
import { agentEvents, createAgentRunLogic, type AnyAgentEvent, type AgentMessage } from "../../src/index.js";
import { comparable, newWorld, scenarioInput, scenarioOptions, type World } from "./scenario.js";
import { scenarioBOptions } from "./scenario-b.js";
import { scenarioCOptions } from "./scenario-c.js";
import { SCENARIO_D_NOT_REPLAY_SAFE, scenarioDOptions } from "./scenario-d.js";
import { runMachine } from "../../machines/run.machine.js";

type Scenario = "a" | "b" | "c" | "d";
const optionsOf = (scenario: Scenario, world: World) =>
  scenario === "a" ? scenarioOptions(world) : scenario === "b" ? scenarioBOptions(world) : scenario === "c" ? scenarioCOptions(world) : scenarioDOptions(world);

interface RestorePoint {
  /** The persisted snapshot, as JSON text. */
  snapshot: string;
  /** How many events had been delivered when it was taken. */
  delivered: number;
  world: World;
  /** Calls whose execution was in flight (their tool-call actor in `executing`). */
  executing: string[];
  state: string;
}

function record(scenario: Scenario) {
  const world = newWorld();
  const actor = createActor(createAgentRunLogic(optionsOf(scenario, world)), { input: scenarioInput() });
  const events: AnyAgentEvent[] = [];
  const points: RestorePoint[] = [];
  agentEvents(actor).subscribe((event) => events.push(event));
  // Every macrostep of the run, and of each tool call (a child's step moves without the run's snapshot changing).
  const persist = () => {
    const snapshot = actor.getSnapshot();
    if (snapshot.status !== "active") return;
    const children = snapshot.children as Record<string, AnyActorRef | undefined>;
    const executing = Object.entries(children)
      .filter(([id, child]) => id.startsWith("tool:") && (child?.getSnapshot() as { value?: unknown })?.value === "executing")
      .map(([, child]) => (child!.getSnapshot() as { context: { toolCall: { id: string } } }).context.toolCall.id);
    points.push({
      snapshot: JSON.stringify(actor.getPersistedSnapshot()),
      delivered: events.length,
      world: structuredClone(world),
      executing,
      state: JSON.stringify(snapshot.value),
    });
  };
  actor.subscribe(persist);
  actor.system.inspect((event) => {
    if (event.type === "@xstate.snapshot" && event.actorRef !== actor && String((event.actorRef as AnyActorRef).id).startsWith("tool:")) queueMicrotask(persist);
  });
  actor.start();
  return { actor, events, points, world };
}

async function restoreInProcess(scenario: Scenario, point: RestorePoint, world: World) {
  const actor = createActor(createAgentRunLogic(optionsOf(scenario, world)), { snapshot: JSON.parse(point.snapshot), input: scenarioInput() });
  const events: AnyAgentEvent[] = [];
  agentEvents(actor).subscribe((event) => events.push(event));
  actor.start();
  const output = await toPromise(actor);
  return { output, events };
}

/** The scenario's calls whose tools are not replay-safe: the write and the sub-agent (R13, R14). */
const NOT_REPLAY_SAFE = new Map([
  ["c5", "write"],
  ["c6", "delegate"],
]);

const interrupted = (name: string) => `Tool ${name} was interrupted before it finished; its outcome is unknown, so it was not run again.`;

/**
 * What the uninterrupted run produced, as R13 says a restore at `point` changes it: a call whose
 * execution was in flight and whose tool is not replay-safe (the write) gets the interrupted result
 * (no `afterToolCall`: it did not execute), everywhere it appears.
 */
function asRestoredAt<T>(value: T, point: RestorePoint): T {
  const ids = new Set(point.executing.filter((id) => NOT_REPLAY_SAFE.has(id)));
  const result = (id: string) => ({ content: [{ type: "text", text: interrupted(NOT_REPLAY_SAFE.get(id)!) }], details: {} });
  const walk = (item: unknown): unknown => {
    if (Array.isArray(item)) return item.map(walk);
    if (!item || typeof item !== "object") return item;
    const object = item as Record<string, unknown>;
    if (object.role === "toolResult" && ids.has(object.toolCallId as string)) {
      const { content, details } = result(object.toolCallId as string);
      return { ...object, content, details, isError: true };
    }
    if (object.type === "tool_execution_end" && ids.has(object.toolCallId as string)) return { ...object, result: result(object.toolCallId as string), isError: true };
    return Object.fromEntries(Object.entries(object).map(([key, entry]) => [key, walk(entry)]));
  };
  return walk(comparable(value)) as T;
}

/**
 * The uninterrupted run's events after `point`. A preflight in flight at the snapshot is issued
 * again (R13): the restored run emits its calls' `tool_execution_start` (and an immediate result's
 * `tool_execution_end`) again, as a re-issued request emits its `message_start` again. Those are
 * the trailing tool events before the snapshot (nothing else comes between a preflight's events).
 */
function expectedSuffix(events: AnyAgentEvent[], point: RestorePoint): AnyAgentEvent[] {
  let from = point.delivered;
  if (point.state.includes("preflighting")) {
    while (from > 0 && (events[from - 1].type === "tool_execution_start" || events[from - 1].type === "tool_execution_end")) from--;
  }
  return asRestoredAt(events.slice(from), point);
}

function resultsPerCall(messages: AgentMessage[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const message of messages) {
    if ((message as { role: string }).role === "assistant") for (const block of (message as { content: { type: string; id?: string }[] }).content) if (block.type === "toolCall") counts.set(block.id!, counts.get(block.id!) ?? 0);
    if ((message as { role: string }).role === "toolResult") {
      const id = (message as { toolCallId: string }).toolCallId;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
  }
  return counts;
}

/** A state value as its leaves' dotted paths (one per region of a parallel state). */
const leavesOf = (value: unknown): string[] =>
  typeof value === "string"
    ? [value]
    : Object.entries(value as Record<string, unknown>).flatMap(([key, inner]) => {
        // An atomic region of a parallel state has the value {}.
        const leaves = leavesOf(inner);
        return leaves.length === 0 ? [key] : leaves.map((leaf) => `${key}.${leaf}`);
      });

describe("R13: restore at any point", () => {
  it.each(["a", "b", "c"] as const)("R13: every restore point of scenario %s finishes as the uninterrupted run", async (scenario) => {
    const original = record(scenario);
    const output = await toPromise(original.actor);
    expect(original.points.length).toBeGreaterThan(10);

    let checked = 0;
    for (const point of original.points) {
      const world = structuredClone(point.world);
      const restored = await restoreInProcess(scenario, point, world);
      // The same messages, but for calls R13 interrupted (the not-replay-safe tools).
      expect(comparable(restored.output), point.state).toEqual(asRestoredAt(output, point));
      expect(comparable(restored.events), point.state).toEqual(expectedSuffix(original.events, point));
      // One result per call, over the whole transcript.
      for (const [id, count] of resultsPerCall(restored.output)) expect(count, `${id} at ${point.state}`).toBe(1);
      // R13: a tool that is not replay-safe never executes twice, whatever the point (the world counts both processes).
      for (const id of NOT_REPLAY_SAFE.keys()) expect(world.executions[id] ?? 0, `${id} at ${point.state}`).toBeLessThanOrEqual(1);
      checked++;
    }
    console.log(`R13: scenario ${scenario}: ${checked} restore points checked in process`);
    expect(checked).toBe(original.points.length);
  });

  it("R13: the four scenarios' restore points cover every state of the run machine", async () => {
    const visited: string[] = [];
    for (const scenario of ["a", "b", "c", "d"] as const) {
      const original = record(scenario);
      await toPromise(original.actor);
      visited.push(...original.points.map((point) => point.state));
    }
    const leaves = (node: { key: string; states: Record<string, unknown>; type: string }, path: string[]): string[][] =>
      Object.keys(node.states).length === 0 ? [path] : Object.entries(node.states as Record<string, never>).flatMap(([key, child]) => leaves(child, [...path, key]));
    const all = leaves(runMachine.root as never, []).map((path) => path.join("."));
    // Transient states (eventless transitions only) and the final one never stand in a snapshot of a running run.
    const transient = new Set([
      "starting",
      "turn.openingNextTurn",
      "turn.injectingMessages",
      "turn.requesting.startingRequest",
      "turn.requesting.sendingRequest",
      "turn.requesting.openingStream",
      "turn.requesting.routingResponse",
      "turn.handlingResponse",
      "turn.abortingStreamedCalls",
      "turn.rejectingTruncatedCalls",
      "turn.closingTurn",
      "turn.endingTurn",
      "choosingNextStep",
      "choosingAfterFollowUps",
      "continuingAsDecided",
      "recoveringOutputLimit",
      "askingForAnswer",
      "failing",
      "done",
    ]);
    const seen = new Set(visited.flatMap((state) => leavesOf(JSON.parse(state))));
    expect(all.filter((state) => !transient.has(state) && !seen.has(state))).toEqual([]);
  });

  /**
   * R13, R70: scenario d persisted at every point, calls running while the response streams among
   * them. A re-issued request streams its response again (its message_start and deltas come again;
   * its calls are known by index and not spawned twice), so what is compared is what R13 promises:
   * the same output (a write in flight gets the interrupted result), exactly one start and one end
   * per call across both processes, one result per call, and the write never executed twice.
   */
  it("R13, R70: every restore point of scenario d (calls running during the stream) finishes as the uninterrupted run", async () => {
    const original = record("d");
    const output = await toPromise(original.actor);
    const duringStream = original.points.filter((point) => point.state.includes('"response":"receiving"') && point.executing.length > 0);
    // Calls executing while the response still streams.
    expect(duringStream.length).toBeGreaterThan(2);
    for (const point of original.points) {
      const world = structuredClone(point.world);
      const restored = await restoreInProcess("d", point, world);
      const interruptedIds = new Set(point.executing.filter((id) => SCENARIO_D_NOT_REPLAY_SAFE.has(id)));
      const expected = comparable(output).map((message) =>
        message.role === "toolResult" && interruptedIds.has(message.toolCallId)
          ? { ...message, content: [{ type: "text", text: interrupted("write") }], details: {}, isError: true }
          : message,
      );
      expect(comparable(restored.output), point.state).toEqual(expected);
      const both = [...original.events.slice(0, point.delivered), ...restored.events];
      for (const id of ["d1", "d2", "d3"]) {
        expect(both.filter((event) => event.type === "tool_execution_start" && event.toolCallId === id).length, `${id} starts at ${point.state}`).toBe(1);
        expect(both.filter((event) => event.type === "tool_execution_end" && event.toolCallId === id).length, `${id} ends at ${point.state}`).toBe(1);
      }
      for (const [id, count] of resultsPerCall(restored.output)) expect(count, `${id} at ${point.state}`).toBe(1);
      expect(world.executions.d2 ?? 0, `d2 at ${point.state}`).toBeLessThanOrEqual(1);
    }
    console.log(`R13: scenario d: ${original.points.length} restore points (${duringStream.length} with calls executing during the stream) checked in process`);
  });

  it.each([
    ["a", "runningInParallel"],
    ["b", "finishingTurn"],
    ["c", "backingOff"],
  ] as const)("R13: scenario %s persisted in %s restores in a fresh process", async (scenario, state) => {
    const original = record(scenario);
    const output = await toPromise(original.actor);
    const point = original.points.find((candidate) => candidate.state.includes(state))!;
    expect(point).toBeDefined();
    const child = fileURLToPath(new URL("./restore-child.ts", import.meta.url));
    const stdout = execFileSync(process.execPath, ["--import", "tsx", child], {
      input: JSON.stringify({ scenario, snapshot: JSON.parse(point.snapshot), world: point.world }),
      encoding: "utf8",
    });
    const restored = JSON.parse(stdout) as { output: AgentMessage[]; events: AnyAgentEvent[] };
    expect(comparable(restored.output)).toEqual(asRestoredAt(output, point));
    expect(comparable(restored.events)).toEqual(expectedSuffix(original.events, point));
  });
});
