/**
 * The run's effect worker: one persistent actor that runs each step's job and replies to the
 * state that asked (`done.<job>` or `failed`). A job starts after the step that requested it, and
 * only once the event sink has settled, so no hook, request or tool starts while the sink is
 * still handling an earlier event.
 */
import { fromCallback, type ActorSystem, type AnyActorRef } from "xstate";
import type { EffectName, EffectReply, EffectRequest } from "../../machines/effects.js";
import { runJobs } from "./run-jobs.js";
import { executeToolCall, finalizeToolCall, gateToolCall } from "./tool-jobs.js";
import type { RunDeps } from "./run-deps.js";

type Job = (deps: RunDeps, input: never) => unknown;

const jobs: Record<EffectName, Job> = {
  ...runJobs,
  gateToolCall,
  executeToolCall,
  finalizeToolCall,
};

export function createEffectsWorker(resolve: (system: ActorSystem<any>) => RunDeps) {
  return fromCallback<EffectRequest>(({ receive, system }) => {
    const deps = resolve(system);
    receive((request) => void run(deps, request));
  });
}

async function run(deps: RunDeps, { job, replyTo }: EffectRequest): Promise<void> {
  let reply: EffectReply;
  try {
    // Never inside the step that asked: a parallel batch starts all its calls in one step, and
    // every event of that step comes before any call executes (R25).
    await undefined;
    // Wait until the sink is idle, not just past the delivery pending now: a job started by the
    // same delivery (a parallel call's update) may have queued more events meanwhile.
    for (let settled = deps.events.settled(); settled; settled = deps.events.settled()) await settled;
    const output = await jobs[job.name](deps, job.input as never);
    reply = { type: `done.${job.name}`, output } as EffectReply;
  } catch (error) {
    reply = { type: "failed", job: job.name, error };
  }
  // A run stopped meanwhile (its sink failed) takes no more replies.
  if ((replyTo as AnyActorRef).getSnapshot().status === "active") replyTo.send(reply);
}
