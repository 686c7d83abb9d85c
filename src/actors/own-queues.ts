/**
 * The Agent's own queue polls (R53, R10): a run's `getSteeringMessages` and `getFollowUpMessages`
 * that drain the Agent's queues, marked as such, so a steering poll can also say that the follow-up
 * queue is empty, or (having taken nothing) that the steering queue still is (`SteeringPoll`), and
 * the run skips the follow-up poll (R10) or steering re-poll (R4a) that would take nothing; and a
 * run whose steering queue is empty as it starts defers its initial steering poll to its first job
 * (R3: the worker looks at the queue where the poll would drain, `StepRequest.checksSteering`).
 *
 * Only a pair made here is authoritative: an app's own hooks (or a wrapper of either of the
 * Agent's) may return messages from anywhere, so their runs poll as the reference does.
 */
import type { AgentMessage } from "../types.js";

/** What the run may ask of the queues behind the two polls. */
export interface OwnQueues {
  /** Whether the follow-up queue is empty now (a follow-up poll would take nothing). */
  followUpsEmpty(): boolean;
  /** Whether the steering queue is empty now (a steering poll would take nothing: R3's deferred poll, R4a's re-poll). */
  steeringEmpty(): boolean;
}

type Poll = () => Promise<AgentMessage[]>;
type MarkedPoll = Poll & { [OWN_QUEUES]?: OwnQueues };

const OWN_QUEUES = Symbol("ownQueues");

/** The two polls of `queues`, each marked with them. */
export function ownQueuePolls(queues: OwnQueues, steering: Poll, followUps: Poll): { getSteeringMessages: Poll; getFollowUpMessages: Poll } {
  return { getSteeringMessages: Object.assign(steering, { [OWN_QUEUES]: queues }), getFollowUpMessages: Object.assign(followUps, { [OWN_QUEUES]: queues }) };
}

/** The queues behind a run's polls, when both are the same Agent's own (else nothing is known). */
export function ownQueuesOf(getSteeringMessages: Poll | undefined, getFollowUpMessages: Poll | undefined): OwnQueues | undefined {
  const queues = (getSteeringMessages as MarkedPoll | undefined)?.[OWN_QUEUES];
  return queues !== undefined && (getFollowUpMessages as MarkedPoll | undefined)?.[OWN_QUEUES] === queues ? queues : undefined;
}
