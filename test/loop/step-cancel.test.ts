/**
 * The step protocol's cancellation (machines/steps.ts): a transition that leaves a step state
 * before its job replied cancels the job (`cancelStep` among its actions), so its signal aborts
 * and it never replies, as leaving an invoking state stops an invoked actor. A step state has no
 * exit action for it (one ran on every step, reply or not), so every machine with steps is read
 * here: each transition that can leave a step state while the state waits, on any event but that
 * job's own `step.<job>.done` or `step.failed`, must name `cancelStep`.
 */
import { describe, expect, it } from "vitest";
import { createMachine, type AnyStateMachine, type AnyStateNode } from "xstate";
import { runMachine } from "../../machines/run.machine.js";
import { toolCallMachine } from "../../machines/tool-call.machine.js";
import { toolCallHostMachine } from "../../machines/tool-call-host.machine.js";

interface TransitionDef {
  source: AnyStateNode;
  target?: AnyStateNode[];
  reenter: boolean;
  eventType: string;
  actions: readonly unknown[];
}

function allNodes(node: AnyStateNode): AnyStateNode[] {
  return [node, ...Object.values(node.states as Record<string, AnyStateNode>).flatMap(allNodes)];
}

const ancestorsOf = (node: AnyStateNode): AnyStateNode[] => (node.parent ? [node.parent, ...ancestorsOf(node.parent)] : []);
const isDescendant = (node: AnyStateNode, of: AnyStateNode) => ancestorsOf(node).includes(of);

/** The state XState exits everything under when it takes `t` (its transition domain). */
function domainOf(t: TransitionDef): AnyStateNode {
  const targets = t.target ?? [];
  if (!t.reenter && targets.every((target) => target === t.source || isDescendant(target, t.source))) return t.source;
  // The least common compound ancestor of the source and the targets.
  for (const candidate of ancestorsOf(t.source)) {
    if (candidate.type === "parallel") continue;
    if (targets.every((target) => isDescendant(target, candidate))) return candidate;
  }
  return t.source.machine.root;
}

/** Can `a` and `b` be active at once (one contains the other, or they sit in parallel regions)? */
function coActive(a: AnyStateNode, b: AnyStateNode): boolean {
  if (a === b || isDescendant(a, b) || isDescendant(b, a)) return true;
  const common = ancestorsOf(a).find((ancestor) => ancestor === b.parent || isDescendant(b, ancestor));
  return common?.type === "parallel";
}

const actionName = (action: unknown) => (typeof action === "string" ? action : (action as { type?: string }).type);

/** Every transition that leaves a step state early without `cancelStep`, as `state --event--> ` lines. */
function uncancelledExits(machine: AnyStateMachine): string[] {
  const nodes = allNodes(machine.root);
  const steps = nodes.filter((node) => (node.meta as { step?: string } | undefined)?.step);
  const transitions = nodes.flatMap((node) => [...[...(node.transitions as Map<string, TransitionDef[]>).values()].flat(), ...((node.always as TransitionDef[] | undefined) ?? [])]);
  const missing: string[] = [];
  for (const t of transitions) {
    if (!t.target) continue;
    const domain = domainOf(t);
    for (const step of steps) {
      if (!(isDescendant(step, domain) || (t.reenter && step === domain)) || !coActive(step, t.source)) continue;
      const job = (step.meta as { step: string }).step;
      if (t.eventType === `step.${job}.done` || t.eventType === "step.failed") continue;
      if (t.actions.some((action) => actionName(action) === "cancelStep")) continue;
      missing.push(`${step.id} left by ${t.source.id} on ${t.eventType || "(always)"}`);
    }
  }
  return missing;
}

describe("a step state left before its reply cancels its job (machines/steps.ts)", () => {
  it.each([
    ["run", runMachine],
    ["toolCall", toolCallMachine],
    ["toolCallHost", toolCallHostMachine],
  ] as const)("%s: every early exit names cancelStep", (_, machine) => {
    expect(uncancelledExits(machine as AnyStateMachine)).toEqual([]);
  });

  it("finds an early exit without cancelStep (the check can fail)", () => {
    const machine = createMachine({
      initial: "working",
      states: {
        working: { meta: { step: "executeToolCall" }, on: { "step.executeToolCall.done": "done", "call.cancel": "done" } },
        done: { type: "final" },
      },
    });
    expect(uncancelledExits(machine)).toEqual(["(machine).working left by (machine).working on call.cancel"]);
  });

  it("sees the tool call's cancels where R73 leaves a step early", () => {
    const cancelling = allNodes(toolCallMachine.root).filter((node) =>
      [...(node.transitions as Map<string, TransitionDef[]>).values()].flat().some((t) => t.actions.some((action) => actionName(action) === "cancelStep")),
    );
    expect(cancelling.map((node) => node.key).sort()).toEqual(["executing", "finalizing", "preflighting"]);
  });
});
