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
 *   snapshot sequence through the `inspect` option;
 * - `memo`: each path set or scenario played once, whichever test asks first, so an aggregate test
 *   computes what it needs itself (`vitest -t` may run it alone) without playing anything twice.
 */
import {
  createActor,
  toPromise,
  type ActorRefLike,
  type AnyActorRef,
  type AnyStateMachine,
  type AnyTransitionDefinition,
  type InspectionEvent,
  type StateValue,
} from "xstate";
import { getStateNodes, toDirectedGraph, type DirectedGraphNode } from "xstate/graph";
import type { AgentContext, AgentEvent, AnyAgentEvent, AgentLoopConfig, AgentMessage, AgentTool, RunActor, RunOptions, StreamFn } from "../../src/index.js";
import { agentEvents, createAgentRunLogic, runAgentLoop, type AgentRunOptions } from "../../src/index.js";
import { runMachine } from "../../machines/run.machine.js";
import { toolCallMachine, type ToolCallContext } from "../../machines/tool-call.machine.js";
import { afterDelivery, endAfterDefect, hostedRuns } from "../../src/api/start-run.js";
import { runInput } from "../../src/api/run-input.js";

import { provideRunMachine } from "../../src/actors/implementations.js";
import { createRunRuntime, type RunRuntime } from "../../src/actors/run-runtime.js";
import type { RuntimeSource } from "../../src/actors/steps-worker.js";
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
  for (const node of [machine.root, ...getStateNodes(machine.root)]) {
    for (const t of node.always ?? []) keys.add(transitionKey(t));
    // Targetless transitions (`step.reissue`, `run.abort`): listed here whether or not the graph has them.
    for (const list of node.transitions.values()) for (const t of list) keys.add(transitionKey(t));
  }
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

/** The machine (by id) an inspected actor runs, if it is one of `machines` (provided copies keep the id). */
function machineOf(ref: ActorRefLike, machines: readonly AnyStateMachine[]): AnyStateMachine | undefined {
  const logic = (ref as { logic?: { id?: string; root?: unknown } }).logic;
  if (!logic?.root) return undefined;
  return machines.find((machine) => machine.id === logic.id);
}

/** The states and transitions the real actors of `machines` took, per machine id. */
export class Coverage {
  private readonly states = new Map<string, Set<string>>();
  private readonly transitions = new Map<string, Set<string>>();

  constructor(readonly machines: readonly AnyStateMachine[]) {
    for (const machine of machines) {
      this.states.set(machine.id, new Set());
      this.transitions.set(machine.id, new Set());
    }
  }

  record(event: InspectionEvent): void {
    if (event.type !== "@xstate.microstep") return;
    const machine = machineOf(event.actorRef, this.machines);
    if (!machine) return;
    const states = this.states.get(machine.id)!;
    for (const id of stateIds(machine.id, (event.snapshot as unknown as { value: StateValue }).value)) states.add(id);
    for (const t of event._transitions) {
      this.transitions.get(machine.id)!.add(transitionKey(t));
      // The source was active when the transition was taken (covers transient initial states).
      for (let node: StateNodeLike | undefined = t.source as StateNodeLike; node && node.parent; node = node.parent) states.add(node.id);
    }
  }

  /** Adds what `other` recorded. */
  merge(other: Coverage): this {
    for (const [id, states] of other.states) for (const state of states) this.states.get(id)?.add(state);
    for (const [id, transitions] of other.transitions) for (const key of transitions) this.transitions.get(id)?.add(key);
    return this;
  }

  /** How many distinct transitions of `machine` the recorded actors took. */
  taken(machine: AnyStateMachine): number {
    return this.transitions.get(machine.id)?.size ?? 0;
  }

  /** What `machine` has that no recorded actor took, and how much it has. */
  report(machine: AnyStateMachine) {
    const states = machineStates(machine);
    const transitions = machineTransitions(machine);
    const takenStates = this.states.get(machine.id) ?? new Set<string>();
    const takenTransitions = this.transitions.get(machine.id) ?? new Set<string>();
    const missing = {
      states: [...states].filter((id) => !takenStates.has(id)),
      transitions: [...transitions].filter((key) => !takenTransitions.has(key)),
    };
    const summary =
      `states ${states.size - missing.states.length}/${states.size}, ` +
      `transitions ${[...transitions].filter((key) => takenTransitions.has(key)).length}/${transitions.size} taken by the runtime`;
    return { missing, summary };
  }
}

/** Plays `play` for each key once, however many tests ask (an aggregate test asks for all of them, in any order). */
export function memo<K, V>(play: (key: K) => Promise<V>): (key: K) => Promise<V> {
  const played = new Map<K, Promise<V>>();
  return (key) => {
    let result = played.get(key);
    if (!result) played.set(key, (result = play(key)));
    return result;
  };
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
  events: AnyAgentEvent[];
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
  onEvent?: (event: AnyAgentEvent, index: number) => void;
  signal?: AbortSignal;
  /** Run the deliberately faulty wiring (see `faultyRunMachine`). */
  faulty?: boolean;
  coverage?: Coverage;
  /** The run actor, as soon as it exists (R82: a realization decides its waiting calls). */
  onActor?: (actor: RunActor) => void;
}

/** An `inspect` observer that records each run and tool-call actor's snapshots into `trace` (and `coverage`). */
export function tracer(trace: RunTrace, coverage?: Coverage): (event: InspectionEvent) => void {
  const current = new Map<ActorRefLike, TraceStep[]>();
  return (event) => {
    coverage?.record(event);
    if (event.type !== "@xstate.snapshot") return;
    const machine = machineOf(event.actorRef, [runMachine, toolCallMachine]);
    if (!machine) return;
    const step = { event: event.event.type, value: (event.snapshot as unknown as { value: StateValue }).value };
    // A tool call's step requests pass through the run on their way to the worker; they leave the run's state as it was.
    if (machine.id === runMachine.id) return void (step.event === "step.run" || step.event === "step.cancel" || trace.run.push(step));
    let steps = current.get(event.actorRef);
    if (!steps) {
      steps = [];
      current.set(event.actorRef, steps);
      trace.toolCalls.push({ id: (event.actorRef as AnyActorRef).id, steps });
    }
    steps.push(step);
  };
}

export async function runLoop(args: LoopArgs): Promise<LoopRun> {
  const events: AnyAgentEvent[] = [];
  const trace: RunTrace = { run: [], toolCalls: [] };
  let actor: RunActor | undefined;
  let requests = 0;
  const streamFn: StreamFn = (...call) => {
    requests++;
    return args.streamFn(...call);
  };
  const options: RunOptions = { onActor: (a) => ((actor = a), args.onActor?.(a)), inspect: tracer(trace, args.coverage) };
  const sink = (event: AnyAgentEvent) => {
    args.onEvent?.(event, events.length);
    events.push(event);
  };
  // R66: the loop's own events join pi's in the one order (the invariants read both).
  const config: AgentLoopConfig = { ...args.config, onRuntimeEvent: (event) => (sink(event), args.config.onRuntimeEvent?.(event)) };
  const messages = args.faulty
    ? await startFaultyRun({ ...args, config }, sink, streamFn, options)
    : await runAgentLoop(args.prompts, args.context, config, sink, args.signal, streamFn, options);
  return { events, messages, trace, actor: actor!, requests };
}

// ---------------------------------------------------------------------------------------------
// The deliberately faulty wiring
// ---------------------------------------------------------------------------------------------

/**
 * Tool names that make the faulty wiring misbehave, to reach the transitions that exist for
 * runtime defects (a correct runtime turns every app failure into a result or `step.failed`):
 * - `crash`: the call's actor throws as it takes its execution's reply → the child errors
 *   (`xstate.error.actor.tool:<i>` in `runningSequentially` or `runningInParallel`), in the order
 *   the replies come, as a real defect there would;
 * - `execFault`: the worker's `executeToolCall` job rejects (the registry lookup throws the second
 *   time, i.e. in the execution after a preflight that passed) → `step.failed` in `executing`.
 */
export const FAULTY_TOOLS = { crash: "crash", execFault: "execFault" } as const;

/** The run's tools, except that looking up a faulty name throws (see FAULTY_TOOLS). */
function faultyRegistry(tools: ToolRegistry): ToolRegistry {
  let execLookups = 0;
  return Object.assign(Object.create(tools) as ToolRegistry, {
    find(name: string) {
      if (name === FAULTY_TOOLS.execFault && ++execLookups % 2 === 0) throw new Error(`faulty runtime: second lookup of ${name} failed`);
      return tools.find(name);
    },
  });
}

/** The runtimes `startRun` serves, but the runtime handed to the worker has the faulty registry. */
const faultySource: RuntimeSource = {
  runtimeOf: (host) => {
    const runtime = hostedRuns().hosts.runtimeOf(host);
    // (Delegating, not a spread copy: the runtime's accessors and methods are on its prototype.)
    return Object.assign(Object.create(runtime) as RunRuntime, { tools: faultyRegistry(runtime.tools) });
  },
  close: (host) => hostedRuns().hosts.close(host),
};

type Guard = (args: { context: ToolCallContext; event: unknown }) => boolean;
const isFinalized = toolCallMachine.implementations.guards.isFinalized as unknown as Guard;

/** The tool-call machine whose `isFinalized` guard (taken on the execution's reply) throws for `crash`. */
const faultyToolCall = toolCallMachine.provide({
  guards: {
    isFinalized: ((args) => {
      if (args.context.toolCall.name === FAULTY_TOOLS.crash) throw new Error("faulty runtime: the call's actor crashed");
      return isFinalized(args);
    }) as Guard as never,
  },
});

let faulty: typeof runMachine | undefined;

/** The run machine provided as `startRun` provides it (`provideRunMachine`), except for the faults above. */
export function faultyRunMachine(): typeof runMachine {
  return (faulty ??= provideRunMachine(faultySource).provide({ actors: { toolCall: faultyToolCall } }));
}

/** `startRun` (src/api/start-run.ts) with the faulty machine: same runtime, queue and defect handling. */
function startFaultyRun(args: LoopArgs, sink: (event: AgentEvent) => void, streamFn: StreamFn, options: RunOptions): Promise<AgentMessage[]> {
  return new Promise((resolve, reject) => {
    const hosted = hostRun({ machine: faultyRunMachine(), ...args, streamFn, sink, inspect: options.inspect as never, onSinkFailure: reject });
    hosted.actor.subscribe({
      complete: () => afterDelivery(hosted.runtime.events, () => resolve(hosted.actor.getSnapshot().output ?? [])),
      error: (error) => {
        hosted.runtime.abort(error);
        const messages = endAfterDefect(hosted.runtime, hosted.actor.getSnapshot().context, error);
        afterDelivery(hosted.runtime.events, () => resolve(messages));
      },
    });
    options.onActor?.(hosted.actor);
    hosted.actor.start();
  });
}

// ---------------------------------------------------------------------------------------------
// A run hosted here, as `startRun` hosts it, on a machine of our choosing
// ---------------------------------------------------------------------------------------------

export interface HostArgs {
  machine: typeof runMachine;
  prompts: AgentMessage[];
  context: { messages: AgentMessage[]; tools?: AgentTool[] };
  config: AgentLoopConfig;
  streamFn: StreamFn;
  sink: (event: AgentEvent) => void | Promise<void>;
  signal?: AbortSignal;
  inspect?: (event: InspectionEvent) => void;
  onSinkFailure?: (error: unknown) => void;
}

/** A run actor and its runtime, bound and not yet started (as `startRun` builds them). */
export function hostRun(args: HostArgs): { actor: RunActor; runtime: RunRuntime } {
  const { hosts } = hostedRuns();
  const host = hosts.newKey();
  const actor: RunActor = createActor(args.machine, {
    input: { ...runInput({ prompts: args.prompts, messages: args.context.messages, tools: new ToolRegistry(args.context.tools), config: args.config, startedAt: 0 }), host },
    inspect: args.inspect,
  });
  const runtime = createRunRuntime({
    owner: actor,
    config: args.config,
    streamFn: args.streamFn,
    tools: args.context.tools,
    sink: args.sink,
    signal: args.signal,
    onSinkFailure: (error) => {
      args.onSinkFailure?.(error);
      actor.stop();
    },
  });
  hosts.serve(host, runtime);
  return { actor, runtime };
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

/**
 * Runs `options(first)` until `reached` settles (its step in flight), persists the run, round-trips
 * the snapshot through JSON, stops it, and restores it with `options(second)` (fresh
 * implementations, as R13 allows). Returns the events of both, the restored output, the state the
 * run was persisted in and the state of each child then.
 */
export async function restoredRun(options: (process: "first" | "second") => AgentRunOptions, reached: Promise<void>, inspect: (event: InspectionEvent) => void) {
  const input = { prompts: [{ role: "user" as const, content: "hi", timestamp: 1 }], messages: [] };
  const first = createActor(createAgentRunLogic(options("first")), { input, inspect });
  const events: AnyAgentEvent[] = [];
  agentEvents(first).subscribe((event) => events.push(event));
  first.start();
  await reached;
  const persistedAt = statePath(first.getSnapshot().value);
  const children = first.getSnapshot().children as Record<string, AnyActorRef | undefined>;
  const persistedChildren = Object.fromEntries(Object.entries(children).map(([id, child]) => [id, (child?.getSnapshot() as { value?: unknown } | undefined)?.value]));
  const snapshot = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
  first.stop();
  const second = createActor(createAgentRunLogic(options("second")), { snapshot, input, inspect });
  agentEvents(second).subscribe((event) => events.push(event));
  second.start();
  const output = (await toPromise(second)) as AgentMessage[];
  return { events, output, actor: second, persistedAt, persistedChildren };
}
