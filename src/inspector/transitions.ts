/**
 * Each state's own transitions, read from the machine definitions (the same ones the diagrams are
 * drawn from): the page lists them when a state is clicked — the event, the guard's name, where it
 * goes. Plain data, keyed by the state's id (the diagrams' node ids).
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
}

interface NodeLike {
  id: string;
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

const info = (event: string, transition: TransitionLike): TransitionInfo => ({ event, guard: guardName(transition.guard), targets: (transition.target ?? []).map((node) => node.id) });

function walk(node: NodeLike, out: Record<string, TransitionInfo[]>): void {
  const own = [...node.transitions.entries()].flatMap(([event, list]) => list.map((transition) => info(event, transition)));
  for (const transition of node.always ?? []) own.push(info("", transition));
  if (own.length > 0) out[node.id] = own;
  for (const child of Object.values(node.states)) walk(child, out);
}

export function machineTransitions(machines: readonly AnyStateMachine[] = [runMachine, sessionMachine, toolCallMachine, toolCallHostMachine]): Record<string, TransitionInfo[]> {
  const out: Record<string, TransitionInfo[]> = {};
  for (const machine of machines) walk(machine.root as unknown as NodeLike, out);
  return out;
}
