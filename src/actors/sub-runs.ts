/**
 * What a tool's `execute` gets as its fifth argument (SPEC R13, R14): whether this execution is a
 * re-run after a restore, and a way to run a nested run (a sub-agent) as a child of the call's own
 * actor, in the same actor system, so the inspector and the trace show it under the call. A
 * sub-run is not part of its parent's snapshot: one in flight at a snapshot follows its tool's
 * `replay` rule like any execution.
 */
import { createActor, toPromise, type AnyActorRef } from "xstate";
import type { AgentMessage, AnyAgentEvent, SubRunRequest, ToolExecutionContext } from "../types.js";
import type { RunRuntime, AgentRunOptions } from "./run-runtime.js";
import type { JobScope } from "./job-scope.js";

export type { SubRunRequest, ToolExecutionContext };

/** One per execution (a class: nothing is allocated per call but the instance). */
class ExecutionContext implements ToolExecutionContext {
  constructor(
    private readonly runtime: RunRuntime,
    private readonly scope: JobScope,
  ) {}

  get replayed(): boolean {
    return this.scope.reissue;
  }

  async runSubAgent(options: AgentRunOptions, request: SubRunRequest): Promise<AgentMessage[]> {
    const { runtime, scope } = this;
    const launcher = runtime.subAgents;
    if (!launcher) throw new Error("agent loop: sub-runs are not available");
    const logic = launcher.logic({ clock: runtime.clock, random: runtime.random, ...options });
    const child: AnyActorRef = createActor(logic, {
      parent: scope.requester,
      input: { prompts: request.prompts ?? [], messages: request.messages ?? [] },
    });
    // The sub-run's whole stream, as before: its runtime events (R66) included.
    const subscription = request.onEvent ? launcher.events(child).subscribe(request.onEvent as (event: AnyAgentEvent) => void) : undefined;
    const signal = scope.signal;
    const abort = () => child.send({ type: "run.abort" } as never);
    signal.addEventListener("abort", abort, { once: true });
    try {
      child.start();
      if (signal.aborted) abort();
      return (await toPromise(child)) as AgentMessage[];
    } finally {
      signal.removeEventListener("abort", abort);
      subscription?.unsubscribe();
    }
  }
}

export function toolExecutionContext(runtime: RunRuntime, scope: JobScope): ToolExecutionContext {
  return new ExecutionContext(runtime, scope);
}
