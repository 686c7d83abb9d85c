/**
 * Shared pieces of the model-based suites:
 *
 * - the machines' transitions and states (`toDirectedGraph` edges plus the eventless `always`
 *   transitions, which `toDirectedGraph` does not list), keyed so that a transition of a provided
 *   copy of a machine has the same key as the one in the definition;
 * - `Coverage`: the states and transitions the REAL actors took, read from `@xstate.microstep`
 *   inspection events (each carries the transitions taken in that microstep);
 * - `runLoop`: one real run (`runAgentLoop`, or the same wiring with a deliberately faulty provided
 *   implementation for the paths only a runtime defect can reach), recording every actor's
 *   snapshot sequence through the `inspect` option.
 */
import {
  createActor,
  enqueueActions,
  type ActorRefLike,
  type AnyActorRef,
  type AnyStateMachine,
  type AnyTransitionDefinition,
  type InspectionEvent,
  type StateValue,
} from "xstate";
import { getStateNodes, toDirectedGraph, type DirectedGraphNode } from "xstate/graph";
import type { AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, RunActor, RunOptions, StreamFn } from "../../src/index.js";
import { runAgentLoop } from "../../src/index.js";
import { runMachine } from "../../machines/run.machine.js";
import { toolCallMachine, type ToolCallContext } from "../../machines/tool-call.machine.js";
import { effectRequest } from "../../machines/effects.js";
import { afterDelivery, createRunDeps, endAfterDefect, runInput } from "../../src/api/start-run.js";
import { createEffectsWorker } from "../../src/actors/effects-worker.js";
import { createToolCallImplementations } from "../../src/actors/implementations.js";
import { bindDeps, depsOf } from "../../src/actors/system-deps.js";
import type { RunDeps } from "../../src/actors/run-deps.js";
import { EventQueue } from "../../src/bridge/event-queue.js";
import { ToolRegistry } from "../../src/loop/tool-registry.js";

// ---------------------------------------------------------------------------------------------
// The machines' states and transitions
// ---------------------------------------------------------------------------------------------

type StateNodeLike = AnyStateMachine["root"];

/** `source#event#index`: the index within the source's list for that event (or its `always` list). */
export function transitionKey(t: AnyTransitionDefinition): string {
  const source = t.source as StateNodeLike;
  const list: readonly AnyTransitionDefinition[] = t.eventType === "" ? (source.always ?? []) : (source.transitions.get(t.eventType) ?? []);
  const index = list.indexOf(t);
  const targets = (t.target ?? []).map((target) => target.id).join(",") || "(self)";
  return `${source.id} —${t.eventType === "" ? "always" : t.eventType}[${index}]→ ${targets}`;
}

/** Every transition of `machine`: `toDirectedGraph`'s edges plus the eventless ones it leaves out. */
export function machineTransitions(machine: AnyStateMachine): Set<string> {
  const keys = new Set<string>();
  const walk = (node: DirectedGraphNode) => {
    for (const edge of node.edges) keys.add(transitionKey(edge.transition));
    node.children.forEach(walk);
  };
  walk(toDirectedGraph(machine));
  for (const node of [machine.root, ...getStateNodes(machine.root)]) for (const t of node.always ?? []) keys.add(transitionKey(t));
  return keys;
}

/** Every state node id of `machine` but the root. */
export function machineStates(machine: AnyStateMachine): Set<string> {
  return new Set(getStateNodes(machine.root).map((node) => node.id));
}

/** The ids of the state nodes a state value is in (`{turn: "endingTurn"}` → `run.turn`, `run.turn.endingTurn`). */
export function stateIds(machineId: string, value: StateValue): string[] {
  if (typeof value === "string") return [`${machineId}.${value}`];
  return Object.entries(value).flatMap(([key, child]) => [`${machineId}.${key}`, ...(child ? stateIds(`${machineId}.${key}`, child) : [])]);
}

/** A state value as a dotted path (`turn.requesting.streaming`). */
export function statePath(value: StateValue): string {
  if (typeof value === "string") return value;
  const [key, child] = Object.entries(value)[0];
  return child && (typeof child === "string" || Object.keys(child).length > 0) ? `${key}.${statePath(child)}` : key;
}

/** The states and transitions the real actors took, per machine. */
export class Coverage {
  readonly states = { run: new Set<string>(), toolCall: new Set<string>() };
  readonly transitions = { run: new Set<string>(), toolCall: new Set<string>() };

  record(event: InspectionEvent): void {
    if (event.type !== "@xstate.microstep") return;
    const kind = actorKind(event.actorRef);
    if (!kind) return;
    const machineId = kind === "run" ? runMachine.id : toolCallMachine.id;
    for (const id of stateIds(machineId, (event.snapshot as unknown as { value: StateValue }).value)) this.states[kind].add(id);
    for (const t of event._transitions) {
      this.transitions[kind].add(transitionKey(t));
      // The source was active when the transition was taken (covers transient initial states).
      for (let node: StateNodeLike | undefined = t.source as StateNodeLike; node && node.parent; node = node.parent) this.states[kind].add(node.id);
    }
  }

  /** What `machine` has that no run took. */
  missing(kind: "run" | "toolCall") {
    const machine = kind === "run" ? runMachine : toolCallMachine;
    return {
      states: [...machineStates(machine)].filter((id) => !this.states[kind].has(id)),
      transitions: [...machineTransitions(machine)].filter((key) => !this.transitions[kind].has(key)),
    };
  }
}

function actorKind(ref: ActorRefLike): "run" | "toolCall" | null {
  const logic = (ref as { logic?: { id?: string; root?: unknown } }).logic;
  if (!logic?.root) return null;
  if (logic.id === runMachine.id) return "run";
  if (logic.id === toolCallMachine.id) return "toolCall";
  return null;
}

// ---------------------------------------------------------------------------------------------
// One real run, traced
// ---------------------------------------------------------------------------------------------

/** An actor's snapshot after each event it processed. */
export interface TraceStep {
  event: string;
  value: StateValue;
}

export interface RunTrace {
  run: TraceStep[];
  /** One entry per spawned tool-call actor, in spawn order. */
  toolCalls: { id: string; steps: TraceStep[] }[];
}

export interface LoopRun {
  events: AgentEvent[];
  messages: AgentMessage[];
  trace: RunTrace;
  actor: RunActor;
  /** Number of requests made. */
  requests: number;
}

export interface LoopArgs {
  prompts: AgentMessage[];
  context: AgentContext;
  config: AgentLoopConfig;
  streamFn: StreamFn;
  /** Called with each event before it is recorded; may abort. */
  onEvent?: (event: AgentEvent, index: number) => void;
  signal?: AbortSignal;
  /** Run the deliberately faulty wiring (see `faultyRunMachine`). */
  faulty?: boolean;
  coverage?: Coverage;
}

export async function runLoop(args: LoopArgs): Promise<LoopRun> {
  const events: AgentEvent[] = [];
  const trace: RunTrace = { run: [], toolCalls: [] };
  let actor: RunActor | undefined;
  let requests = 0;
  const streamFn: StreamFn = (...call) => {
    requests++;
    return args.streamFn(...call);
  };
  const current = new Map<ActorRefLike, TraceStep[]>();
  const options: RunOptions = {
    onActor: (a) => (actor = a),
    inspect: (event) => {
      args.coverage?.record(event);
      if (event.type !== "@xstate.snapshot") return;
      const kind = actorKind(event.actorRef);
      if (!kind) return;
      const step = { event: event.event.type, value: (event.snapshot as unknown as { value: StateValue }).value };
      if (kind === "run") return void trace.run.push(step);
      let steps = current.get(event.actorRef);
      if (!steps) {
        steps = [];
        current.set(event.actorRef, steps);
        trace.toolCalls.push({ id: (event.actorRef as AnyActorRef).id, steps });
      }
      steps.push(step);
    },
  };
  const sink = (event: AgentEvent) => {
    args.onEvent?.(event, events.length);
    events.push(event);
  };
  const messages = args.faulty
    ? await startFaultyRun(args, sink, streamFn, options)
    : await runAgentLoop(args.prompts, args.context, args.config, sink, args.signal, streamFn, options);
  return { events, messages, trace, actor: actor!, requests };
}

// ---------------------------------------------------------------------------------------------
// The deliberately faulty wiring
// ---------------------------------------------------------------------------------------------

/**
 * Tool names that make the faulty wiring misbehave, to reach the transitions that exist for
 * runtime defects:
 * - `crash`: the tool-call actor's preparation throws → the child errors at once
 *   (`xstate.error.actor.tool:<i>` while preflighting one by one, running a sequential call, or
 *   running a parallel batch that started every call at once);
 * - `crashExec`: the child's `execute` action throws → the child errors on `EXECUTE`
 *   (`xstate.error.actor.tool:<i>` in `runningInParallel` after preflights one by one);
 * - `execFault`: the worker's `executeToolCall` job rejects → the child gets `failed` in `executing`.
 */
export const FAULTY_TOOLS = { crash: "crash", crashExec: "crashExec", execFault: "execFault" } as const;

function faultyRegistry(tools: ToolRegistry, faultyName: string): ToolRegistry {
  return Object.assign(Object.create(tools) as ToolRegistry, {
    find(name: string) {
      if (name === faultyName) throw new Error(`faulty runtime: lookup of ${name} failed`);
      return tools.find(name);
    },
  });
}

const withRegistry = (deps: RunDeps, faultyName: string): RunDeps => ({ ...deps, tools: faultyRegistry(deps.tools, faultyName) });

const faultyExecute = enqueueActions(({ context, enqueue, self }: { context: ToolCallContext; enqueue: any; self: AnyActorRef }) => {
  if (context.toolCall.name === FAULTY_TOOLS.crashExec) throw new Error("faulty runtime: execute action crashed");
  enqueue.sendTo(context.effects, effectRequest("executeToolCall", { toolCall: context.toolCall, args: context.args }, self));
});

let faulty: typeof runMachine | undefined;

/** The run machine provided like the default runtime, except for the faults above. */
export function faultyRunMachine(): typeof runMachine {
  return (faulty ??= runMachine.provide({
    actors: {
      effects: createEffectsWorker((system) => withRegistry(depsOf(system), FAULTY_TOOLS.execFault)),
      toolCall: toolCallMachine.provide({
        actions: {
          ...createToolCallImplementations((system) => withRegistry(depsOf(system), FAULTY_TOOLS.crash)).actions,
          execute: faultyExecute as never,
        },
      }),
    },
  }));
}

/** `startRun` (src/api/start-run.ts) with the faulty machine; same deps, queue and defect handling. */
function startFaultyRun(args: LoopArgs, sink: (event: AgentEvent) => void, streamFn: StreamFn, options: RunOptions): Promise<AgentMessage[]> {
  const controller = new AbortController();
  args.signal?.addEventListener("abort", () => controller.abort(args.signal!.reason), { once: true });
  return new Promise((resolve, reject) => {
    let actor: RunActor | undefined;
    const events = new EventQueue(sink, (error) => {
      controller.abort(error);
      actor?.stop();
      reject(error);
    });
    const tools = new ToolRegistry(args.context.tools);
    const deps = createRunDeps({ config: args.config, streamFn, signal: controller.signal, events, tools, context: () => actor!.getSnapshot().context });
    actor = createActor(faultyRunMachine(), {
      input: runInput({ prompts: args.prompts, messages: args.context.messages, tools, config: args.config }),
      inspect: options.inspect,
    });
    bindDeps(actor.system, deps);
    actor.on("*", (event) => void events.push(event));
    actor.subscribe({
      complete: () => afterDelivery(events, () => resolve(actor!.getSnapshot().output ?? [])),
      error: (error) => {
        controller.abort(error);
        const messages = endAfterDefect(events, actor!.getSnapshot().context, error);
        afterDelivery(events, () => resolve(messages));
      },
    });
    options.onActor?.(actor);
    actor.start();
  });
}

/** No actor of the run is left running: the root is done and holds no live child (checked via `onActor`). */
export function liveActorProblems(actor: RunActor): string[] {
  const snapshot = actor.getSnapshot();
  const problems: string[] = [];
  if (snapshot.status !== "done") problems.push(`run actor status is ${snapshot.status}`);
  for (const [id, child] of Object.entries(snapshot.children as Record<string, AnyActorRef | undefined>)) {
    if (child && child.getSnapshot().status === "active") problems.push(`child ${id} is still active`);
  }
  return problems;
}
