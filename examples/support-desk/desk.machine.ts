/**
 * An app's own statechart around an agent run: a support desk takes a question, has an agent
 * triage it (an invoked run: `triage`), and follows the run's outcome: answered (the customer
 * accepts, or retries once), escalated to a person (the agent called `escalate`, or the app gave
 * up), or failed (the run ended in an error or was aborted). Leaving `triaging` (CANCEL) aborts
 * the run, as leaving any invoking state does.
 *
 * The machine does no I/O: `triage` is a placeholder the app provides (`provide({ actors })`),
 * in production with an Agent or `runAgentLoop`, in tests with each of the loop's scripted paths
 * (test/examples/support-desk.model.test.ts explores this machine across them).
 */
import { assign, fromPromise, setup } from "xstate";
import type { AgentMessage } from "../../src/index.js";

export interface TriageInput {
  question: string;
  /** 0 for the first run, 1 for the retry. */
  attempt: number;
}

export type RunOutcome = "answered" | "escalated" | "failed";

export interface DeskContext {
  question: string;
  attempts: number;
  /** How the last run ended, as the app reads it, and its last answer's text. */
  outcome: RunOutcome | null;
  answer: string;
}

export type DeskEvent =
  | { type: "ASK"; question: string }
  | { type: "CANCEL" }
  | { type: "ACCEPT" }
  | { type: "RETRY" }
  | { type: "GIVE_UP" }
  | { type: "ASSIGN" };

const assistantMessages = (messages: readonly AgentMessage[]) =>
  messages.filter((message): message is Extract<AgentMessage, { role: "assistant" }> => (message as { role?: string }).role === "assistant");

/** How the app reads a run's messages: failed (error, aborted), escalated (`escalate` ran), or answered. */
export function outcomeOf(messages: readonly AgentMessage[]): RunOutcome {
  const last = assistantMessages(messages).at(-1);
  if (!last || last.stopReason === "error" || last.stopReason === "aborted") return "failed";
  const escalated = messages.some((message) => (message as { role?: string }).role === "toolResult" && (message as { toolName: string }).toolName === "escalate" && !(message as { isError: boolean }).isError);
  return escalated ? "escalated" : "answered";
}

export function answerOf(messages: readonly AgentMessage[]): string {
  const last = assistantMessages(messages).at(-1);
  return last ? last.content.map((part) => (part.type === "text" ? part.text : "")).join("") : "";
}

/** The outcome, and the answer's text unless the run failed (an aborted answer's text depends on timing). */
function recorded(output: AgentMessage[]): Pick<DeskContext, "outcome" | "answer"> {
  const outcome = outcomeOf(output);
  return { outcome, answer: outcome === "failed" ? "" : answerOf(output) };
}

export const deskMachine = setup({
  types: {
    context: {} as DeskContext,
    events: {} as DeskEvent,
  },
  actors: {
    // Provided by the app (an agent run); the machine only knows its input and output.
    triage: fromPromise<AgentMessage[], TriageInput>(() => {
      throw new Error("deskMachine: provide the `triage` actor (an agent run)");
    }),
  },
  guards: {
    runFailed: ({ event }) => outcomeOf((event as unknown as { output: AgentMessage[] }).output) === "failed",
    runEscalated: ({ event }) => outcomeOf((event as unknown as { output: AgentMessage[] }).output) === "escalated",
    canRetry: ({ context }) => context.attempts < 1,
  },
}).createMachine({
  id: "desk",
  context: { question: "", attempts: 0, outcome: null, answer: "" },
  initial: "idle",
  states: {
    idle: {
      on: { ASK: { target: "triaging", actions: assign({ question: ({ event }) => event.question, attempts: 0, outcome: null, answer: "" }) } },
    },
    triaging: {
      invoke: {
        id: "triage",
        src: "triage",
        input: ({ context }) => ({ question: context.question, attempt: context.attempts }),
        onDone: [
          { guard: "runFailed", target: "failed", actions: assign(({ event }) => recorded(event.output)) },
          { guard: "runEscalated", target: "escalated", actions: assign(({ event }) => recorded(event.output)) },
          { target: "answered", actions: assign(({ event }) => recorded(event.output)) },
        ],
        // A run that rejects (a broken hook) is a failure the app shows, not a crash.
        onError: { target: "failed", actions: assign({ outcome: "failed", answer: "" }) },
      },
      // Leaving the state aborts the run's signal.
      on: { CANCEL: "idle" },
    },
    answered: {
      on: {
        ACCEPT: "resolved",
        RETRY: { guard: "canRetry", target: "triaging", actions: assign({ attempts: ({ context }) => context.attempts + 1 }) },
      },
    },
    failed: {
      on: {
        RETRY: { guard: "canRetry", target: "triaging", actions: assign({ attempts: ({ context }) => context.attempts + 1 }) },
        GIVE_UP: "escalated",
      },
    },
    escalated: { on: { ASSIGN: "resolved" } },
    resolved: { type: "final" },
  },
});
