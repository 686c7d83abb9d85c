/**
 * A durable Agent's queues after a crash (SPEC R80, R81): what was queued since the session's
 * quiet point and not taken by a run.
 *
 * A message counts as taken only once the journal holds the run's receipt of it: a poll's reply
 * (`job` record of `getSteeringMessages` or `getFollowUpMessages`) or a run's prompts (`continue()`
 * takes from the queue into its run's input). A crash between a take and its receipt leaves the
 * message queued, so the poll that runs again takes it: nothing is lost, and nothing is taken twice.
 */
import type { AgentMessage } from "../types.js";
import { isJournalRecord, type QueueRecord } from "./records.js";
import { polledMessages, type SteeringPoll } from "../../machines/steps.js";

type Queues = Record<"steering" | "followUp", AgentMessage[]>;

const POLLS = { getSteeringMessages: "steering", getFollowUpMessages: "followUp" } as const;

/** `base` (the quiet point's queues) with the journal's later arrivals, clears and receipts applied in order. */
export function queuesAfter(base: Queues, records: readonly unknown[]): Queues {
  const queues: Queues = { steering: base.steering.slice(), followUp: base.followUp.slice() };
  const take = (queue: keyof Queues | undefined, messages: readonly AgentMessage[]) => {
    for (const message of messages) {
      const text = JSON.stringify(message);
      for (const name of queue ? [queue] : (["steering", "followUp"] as const)) {
        const at = queues[name].findIndex((queued) => JSON.stringify(queued) === text);
        if (at < 0) continue;
        queues[name].splice(at, 1);
        break;
      }
    }
  };
  for (const record of records) {
    if (!isJournalRecord(record)) continue;
    if (record.k === "queue") apply(queues, record);
    else if (record.k === "job" && record.job in POLLS && record.reply.ok && isPoll(record.reply.output)) {
      take(POLLS[record.job as keyof typeof POLLS], polledMessages(record.reply.output));
    } else if (record.k === "run" && record.input.prompts) take(undefined, record.input.prompts);
  }
  return queues;
}

/** A poll's reply output: its messages (format 3 and later: a steering poll's may also say what was left in the queues). */
const isPoll = (output: unknown): output is SteeringPoll =>
  Array.isArray(output) || (typeof output === "object" && output !== null && Array.isArray((output as { messages?: unknown }).messages));

function apply(queues: Queues, record: QueueRecord): void {
  if (record.op === "push") queues[record.queue].push(record.message);
  else if (record.queue === "all") {
    queues.steering = [];
    queues.followUp = [];
  }
  else queues[record.queue] = [];
}
