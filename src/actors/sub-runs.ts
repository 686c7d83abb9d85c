/**
 * What a tool's `execute` gets as its fifth argument (SPEC R13, R14): whether this execution is a
 * re-run after a restore, and a way to run a nested run (a sub-agent) as a child of the call's own
 * actor, in the same actor system, so the inspector and the trace show it under the call. A
 * sub-run is not part of its parent's snapshot: one in flight at a snapshot follows its tool's
 * `replay` rule like any execution.
 */
import { createActor, toPromise, type AnyActorRef } from "xstate";
import type { AgentMessage, AnyAgentEvent, SubRunRequest, ToolExecutionContext, Usage } from "../types.js";
import { emptyUsage } from "../protocol/usage.js";
import { addMessageUsage } from "../../machines/session.helpers.js";
import type { RunRuntime, AgentRunOptions } from "./run-runtime.js";
import type { JobScope } from "./job-scope.js";

export type { SubRunRequest, ToolExecutionContext };

/**
 * How deep sub-agents nest: a run's sub-agent is at depth 1, its own sub-agent at 2. A tool that
 * delegates to an agent holding the same tool recurses for as long as the model keeps calling it,
 * and no budget stops that (a run's budget is checked at its turn ends, which wait for the
 * sub-agent): beyond this depth `runSubAgent` rejects at once.
 */
export const MAX_SUB_AGENT_DEPTH = 8;

/** One per execution (a class: nothing is allocated per call but the instance). */
export class ExecutionContext implements ToolExecutionContext {
  /**
   * R63: what the sub-runs that ended spent: the usage of the messages each added (its responses,
   * its own tools' results: a nested sub-agent's spend included). The call's result carries it.
   */
  spent: Usage | undefined = undefined;

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
    const { depth } = launcher;
    if (depth > MAX_SUB_AGENT_DEPTH) throw new Error(`agent loop: sub-agents nest at most ${MAX_SUB_AGENT_DEPTH} deep; this one would be at depth ${depth}`);
    const logic = launcher.logic({ clock: runtime.clock, random: runtime.random, ...options });
    const child: AnyActorRef = createActor(logic, {
      parent: scope.requester,
      input: { prompts: request.prompts ?? [], messages: request.messages ?? [] },
    });
    const abort = () => child.send({ type: "run.abort" } as never);
    // The sub-run's whole stream, as before: its runtime events (R66) included. A listener that
    // throws fails the sub-run with its error, as a run's sink does (R56): the sub-run is aborted,
    // the listener hears no more, and `runSubAgent` rejects with it (RxJS would rethrow it from a
    // timer: an uncaught exception).
    let failure: { error: unknown } | undefined;
    const onEvent = request.onEvent as ((event: AnyAgentEvent) => void) | undefined;
    const subscription = onEvent
      ? launcher.events(child).subscribe((event) => {
          if (failure) return;
          try {
            onEvent(event);
          } catch (error) {
            failure = { error };
            abort();
          }
        })
      : undefined;
    const signal = scope.signal;
    signal.addEventListener("abort", abort, { once: true });
    try {
      child.start();
      if (signal.aborted) abort();
      const added = (await toPromise(child)) as AgentMessage[];
      this.spent = added.reduce(addMessageUsage, this.spent ?? emptyUsage());
      if (failure) throw failure.error;
      return added;
    } finally {
      signal.removeEventListener("abort", abort);
      subscription?.unsubscribe();
    }
  }
}

export function toolExecutionContext(runtime: RunRuntime, scope: JobScope): ExecutionContext {
  return new ExecutionContext(runtime, scope);
}
