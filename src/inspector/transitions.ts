/**
 * Each state's own transitions, read from the machine definitions (the same ones the diagrams are
 * drawn from): the page lists them when a state is clicked — the event, the guard's name, where it
 * goes, and the SPEC rule ids (from visualizations/machine-rules.json, which `npm run visualize`
 * reads from the machines' comments). Plain data, keyed by the state's id (the diagrams' node ids).
 */
import type { AnyStateMachine } from "xstate";
import { runMachine } from "../../machines/run.machine.js";
import { sessionMachine } from "../../machines/session.machine.js";
import { toolCallMachine } from "../../machines/tool-call.machine.js";
import { toolCallHostMachine } from "../../machines/tool-call-host.machine.js";

export interface TransitionInfo {
  /** The event type ("" for an eventless `always` transition). */
  event: string;
  guard: string | null;
  /** Target state ids (none: a targetless transition, actions only). */
  targets: string[];
  /** The rule ids of the transition's comment and of its guard's. */
  rules: string[];
}

export interface StateInfo {
  /** The rule ids of the state's own comment. */
  rules: string[];
  transitions: TransitionInfo[];
}

/** visualizations/machine-rules.json (scripts/diagram/rules.ts): keyed by state path (`run.turn`). */
export interface MachineRules {
  states: Record<string, string[]>;
  transitions: Record<string, Record<string, string[][]>>;
}

interface NodeLike {
  id: string;
  path: string[];
  machine: { id: string };
  states: Record<string, NodeLike>;
  transitions: Map<string, TransitionLike[]>;
  always?: TransitionLike[];
}
interface TransitionLike {
  target?: readonly { id: string }[];
  guard?: unknown;
}

const guardName = (guard: unknown): string | null =>
  guard === undefined || guard === null ? null : typeof guard === "string" ? guard : typeof guard === "object" && typeof (guard as { type?: unknown }).type === "string" ? (guard as { type: string }).type : "(inline guard)";

function walk(node: NodeLike, rules: MachineRules, out: Record<string, StateInfo>): void {
  const path = [node.machine.id, ...node.path].join(".");
  const ruled = rules.transitions[path] ?? {};
  const info = (event: string, transition: TransitionLike, index: number): TransitionInfo => ({
    event,
    guard: guardName(transition.guard),
    targets: (transition.target ?? []).map((target) => target.id),
    rules: ruled[event]?.[index] ?? [],
  });
  const own = [...node.transitions.entries()].flatMap(([event, list]) => list.map((transition, index) => info(event, transition, index)));
  (node.always ?? []).forEach((transition, index) => own.push(info("", transition, index)));
  const stateRules = rules.states[path] ?? [];
  if (own.length > 0 || stateRules.length > 0) out[node.id] = { rules: stateRules, transitions: own };
  for (const child of Object.values(node.states)) walk(child, rules, out);
}

export function machineTransitions(
  rules: MachineRules = { states: {}, transitions: {} },
  machines: readonly AnyStateMachine[] = [runMachine, sessionMachine, toolCallMachine, toolCallHostMachine],
): Record<string, StateInfo> {
  const out: Record<string, StateInfo> = {};
  for (const machine of machines) walk(machine.root as unknown as NodeLike, rules, out);
  return out;
}
