/**
 * SPEC R13 through the Agent API: a session persisted with `agent.getPersistedSnapshot()` after
 * every transition of its session, run and tool-call actors, JSON round-tripped and restored with
 * `Agent.restore(snapshot, freshOptions)`, ends with the transcript of the uninterrupted session.
 * Three sessions between them stand in every state of the session machine: a plain prompt, one
 * aborted at its first call's start (`aborting`), and one whose listener throws once (`failing`).
 * What the app decided outside the session (whether it aborted, whether its listener threw) is
 * plain data saved next to each snapshot, as an app's own state would be.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { AnyActorRef } from "xstate";
import { Agent } from "../../src/index.js";
import { comparable } from "./scenario.js";
import { agentScenario, type AgentScenario, type AgentWorld } from "./agent-scenario.js";

interface Point {
  snapshot: string;
  world: AgentWorld;
  state: string;
}

async function record(kind: AgentScenario) {
  const world: AgentWorld = { aborted: false, thrown: false };
  const { options, listener } = agentScenario(kind, world, () => agent);
  const agent: Agent = new Agent(options);
  if (listener) agent.subscribe(listener);
  const points: Point[] = [];
  const persist = () => {
    const snapshot = agent.actor.getSnapshot();
    if (!snapshot.matches("idle")) points.push({ snapshot: JSON.stringify(agent.getPersistedSnapshot()), world: { ...world }, state: JSON.stringify(snapshot.value) });
  };
  agent.actor.subscribe(persist);
  agent.actor.system.inspect((event) => {
    if (event.type === "@xstate.snapshot" && (event.actorRef as AnyActorRef) !== agent.actor) queueMicrotask(persist);
  });
  await agent.prompt("Read a and b.");
  return { agent, points };
}

describe("R13: the Agent restores mid-run", () => {
  it.each(["plain", "aborted", "failing"] as const)("R13: Agent.restore at every snapshot of the %s session ends with the uninterrupted transcript", async (kind) => {
    const { agent, points } = await record(kind);
    const expected = comparable(agent.state.messages);
    // A listener that threw before the session took its failure: the restored session never
    // learns of it (the throw was the old process's), so it finishes as the plain session does.
    const unnoticed = comparable((await record("plain")).agent.state.messages);
    expect(points.length).toBeGreaterThan(5);
    for (const point of points) {
      const expectedHere = kind === "failing" && point.world.thrown && !point.state.includes("failing") ? unnoticed : expected;
      const world = { ...point.world };
      const parts = agentScenario(kind, world, () => restored);
      const restored: Agent = Agent.restore(JSON.parse(point.snapshot), parts.options);
      if (parts.listener) restored.subscribe(parts.listener);
      await restored.waitForIdle();
      expect(restored.state.isStreaming, point.state).toBe(false);
      expect(comparable(restored.state.messages), point.state).toEqual(expectedHere);
    }
    console.log(`R13: ${kind} session: ${points.length} Agent restore points checked`);
  });

  it("R13: the three sessions stand in every state of the session machine", async () => {
    const states = new Set<string>();
    for (const kind of ["plain", "aborted", "failing"] as const) for (const point of (await record(kind)).points) states.add(point.state);
    const seen = [...states].join(" ");
    for (const state of ['"running":"active"', '"running":"aborting"', '"busy":"settling"', '"busy":"failing"']) expect(seen, state).toContain(state);
  });

  it("R13: an Agent persisted mid-batch restores in a fresh process", async () => {
    const { agent, points } = await record("plain");
    const point = points.find((candidate) => candidate.state.includes("running"))!;
    const child = fileURLToPath(new URL("./agent-restore-child.ts", import.meta.url));
    const stdout = execFileSync(process.execPath, ["--import", "tsx", child], { input: JSON.stringify({ snapshot: JSON.parse(point.snapshot), world: point.world }), encoding: "utf8" });
    expect(comparable(JSON.parse(stdout))).toEqual(comparable(agent.state.messages));
  });
});
