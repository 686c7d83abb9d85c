/**
 * The Agent's session (SPEC R50–R55): the transcript, model, thinking level, steering and
 * follow-up queues and usage totals, as plain data, and the Agent's lifecycle, idle ⇄ busy. Each
 * `prompt()`/`continue()` is one `RUN`, which invokes the run machine, so the inspector shows every
 * run (and its tool calls) as a child of the session. Runs are sequential: one actor system
 * serves them all.
 *
 * `busy` lasts until the run's event listeners have settled (`isStreaming` stays true through the
 * `agent_end` listeners, R54), and ends one of three ways: after `agent_end`, straight to idle when
 * the listeners have every event and through `settling` while they do not; through `settling`
 * after a runtime defect closed the run with a failure message (R55); `failing` when a listener
 * threw, which stops the run and closes it with a failure message (R55).
 *
 * The definition is pure. The runtime (`src/agent/`) provides the run machine, the actions that
 * connect a run to the Agent's abort signal, and the actors that wait for its listeners, once per
 * process: they find the Agent's side of the session by `context.host`, a plain-data key (never
 * through context holding functions, nor through the actor), so any number of sessions share one
 * provided machine (R14).
 */
import { and, assertEvent, assign, sendTo, setup, type PromiseActorLogic } from "xstate";
import { placeholderAction, placeholderActor, placeholderGuard } from "./placeholders.js";
import type { AgentEvent, AgentMessage, ApprovalRule, Model, QueueMode, ThinkingLevel, Usage } from "../src/protocol/index.js";
import type { RunInput } from "./run.types.js";
import { currentSystemMessage } from "../src/protocol/transcript/index.js";
import { emptyUsage } from "../src/protocol/usage.js";
import { addMessageUsage, takeBatch, turnError, type QueueName } from "./session.helpers.js";
import { runMachine } from "./run.machine.js";
import type { RunApprovalEvent } from "./steps.js";
import { withRule } from "./approval.helpers.js";

export type { QueueName } from "./session.helpers.js";

export interface SessionInput {
  /** Which session runtime of this process serves the session (`context.host`). */
  host: string;
  /** The transcript, leading system message included (R50). */
  messages: AgentMessage[];
  model: Model;
  thinkingLevel: ThinkingLevel;
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  /**
   * An idle session's whole context, as it was when its actor was dropped (issue 19: an idle
   * Agent keeps no actor, only this); the session starts idle with it, and the other fields are
   * ignored. Plain data, taken as it is (a snapshot would be walked in depth on restore).
   */
  context?: SessionContext;
}

export interface SessionContext {
  /**
   * The key of the session runtime that serves this session in this process (its hooks, listeners
   * and run: `SessionHosts`, src/agent/session-actors.ts). Plain data; whoever makes an actor from
   * a persisted or parked context sets its own (`rehostedSession`).
   */
  host: string;
  /** `Agent.state.messages`: each run's messages are appended as they end. */
  messages: AgentMessage[];
  model: Model;
  thinkingLevel: ThinkingLevel;
  /** Queued messages, oldest first (R53). */
  queues: Record<QueueName, AgentMessage[]>;
  modes: Record<QueueName, QueueMode>;
  /** From the most recent turn that ended with an error or abort; cleared when a run starts. */
  errorMessage: string | null;
  /** Tokens and cost of every assistant message and tool result so far (not cleared by `RESET`). */
  usage: Usage;
  /** R55: what closes a run whose listener threw: its failure events, fixed when it threw. */
  failure: AgentEvent[];
  /** How many messages the transcript had when the current run started (see `adoptRunOutput`); -1 once the app replaced it. */
  runStart: number;
  /**
   * R82: runs started so far (run N's approval ids are `approval-N-<n>`, unique within the
   * session), and the "always allow" rules, kept for the rest of the session (not cleared by `RESET`).
   */
  approval: SessionApprovals;
}

export interface SessionApprovals {
  runs: number;
  rules: ApprovalRule[];
}

export type SessionEvent =
  /**
   * Start a run (prompt or continue) from `input`, served under the run key `host` (given apart, so
   * the input is copied once, with it). `dequeue`: the prompts were taken from that queue (R52).
   */
  | { type: "run.start"; input: RunInput; host: string; dequeue?: { queue: QueueName; count: number } }
  /** Abort the current run's signal (R54). */
  | { type: "run.abort" }
  | { type: "queue.steer"; message: AgentMessage }
  | { type: "queue.followUp"; message: AgentMessage }
  /** A drain point handed the first `count` messages of a queue to the run (see `takeBatch`). */
  | { type: "queue.take"; queue: QueueName; count: number }
  | { type: "queue.clear"; queue: QueueName | "all" }
  | { type: "queue.setMode"; queue: QueueName; mode: QueueMode }
  | { type: "session.setMessages"; messages: AgentMessage[] }
  | { type: "session.setModel"; model: Model }
  | { type: "session.setThinkingLevel"; thinkingLevel: ThinkingLevel }
  /** A run's message ended (its `message_end` reached the Agent): it joins the transcript. */
  | { type: "run.messageEnd"; message: AgentMessage }
  /**
   * The messages of the current run whose ends the Agent deferred (it records a run's messages with
   * its output at its end, issue 40), recorded before the transcript changes otherwise mid-run.
   */
  | { type: "run.messagesEnd"; messages: AgentMessage[] }
  /** R61: the run discarded its last message (a truncated answer asked for again with a higher limit). */
  | { type: "run.messageDiscarded" }
  /** R62: the run compacted its transcript (its `transcript_replaced` reached the Agent): the run's messages follow it. */
  | { type: "run.transcriptReplaced"; messages: AgentMessage[] }
  /** A run's turn ended with an error message (its `turn_end` reached the Agent; the Agent sends only those: `turnError`). */
  | { type: "run.turnEnd"; message: AgentMessage }
  /** A listener threw: the run is stopped and closed with a failure message (R55). */
  | { type: "sink.failed"; events: AgentEvent[] }
  /**
   * R13: a session restored mid-run takes the messages its run added so far (those whose
   * `message_end` was still on its way to the Agent that persisted it included).
   */
  | { type: "run.resume"; messages: AgentMessage[] }
  /** Keep one system message with the replayed prompt and tools; clear the queues (R54). */
  | { type: "session.reset" }
  /** R82: a decision for a call of the current run (the Agent checked that it waits); `rule`: "always allow", kept for the session. */
  | (Extract<RunApprovalEvent, { type: "approval.approve" }> & { rule?: ApprovalRule })
  | Extract<RunApprovalEvent, { type: "approval.reject" }>
  /** R82: forget the "always allow" rules. */
  | { type: "approval.clearRules" };

/** What the session's actors are given: the key of the session runtime they serve (`context.host`). */
export interface SessionActorInput {
  host: string;
}
/** Resolves once the run's listeners have handled every event it produced (R54). */
export type SettleEventsLogic = PromiseActorLogic<void, SessionActorInput>;
/** Delivers a failed run's failure message, `turn_end` and `agent_end` to the listeners (R55). */
export type EmitFailureLogic = PromiseActorLogic<void, SessionActorInput & { events: AgentEvent[] }>;

/**
 * Shared by every session whose queues are empty (issue 40 item 5: an idle Agent's context stays
 * small). The context is never changed in place: a queue change makes new arrays and a new object.
 */
const noQueues: Record<QueueName, AgentMessage[]> = Object.freeze({ steering: Object.freeze([]) as unknown as AgentMessage[], followUp: Object.freeze([]) as unknown as AgentMessage[] });
const emptyQueues = (): Record<QueueName, AgentMessage[]> => noQueues;
/** The default modes, shared likewise. */
const defaultModes: Record<QueueName, QueueMode> = Object.freeze({ steering: "one-at-a-time", followUp: "one-at-a-time" });

export const sessionMachine = setup({
  types: {
    input: {} as SessionInput,
    context: {} as SessionContext,
    events: {} as SessionEvent,
    /** The invoked run is `snapshot.children.run`, typed as the run machine's actor. */
    children: {} as { run: "run" },
  },
  actors: {
    run: runMachine,
    /** Resolves once the run's listeners have handled every event it produced. */
    settleEvents: placeholderActor<SettleEventsLogic>("settleEvents"),
    /** Delivers the failure message, `turn_end` and `agent_end` to the listeners (R55). */
    emitFailure: placeholderActor<EmitFailureLogic>("emitFailure"),
  },
  actions: {
    /** Abort the current run's signal, which the listeners hold until the session is idle (R54). */
    abortRun: placeholderAction("abortRun"),
    /** R55: the run actor failed; close it with a failure message through its event queue. */
    endAfterDefect: placeholderAction<{ error: unknown }>("endAfterDefect"),
    /** The Agent is idle again: settle `prompt()`/`continue()` and `waitForIdle()`. */
    finishRun: placeholderAction("finishRun"),
    beginRun: assign(({ context, event }) => {
      assertEvent(event, "run.start");
      const approval = approvalsOf(context);
      const next: Partial<SessionContext> = { errorMessage: null, runStart: context.messages.length, approval: { ...approval, runs: approval.runs + 1 } };
      if (event.dequeue) next.queues = dequeued(context, event.dequeue.queue, event.dequeue.count);
      return next;
    }),
    // R12, R13: the run's output is what it added. The Agent defers its messages' ends (issue 40:
    // a session step each), so the transcript has none of them yet: they join it now, with their
    // usage. A session that recorded them (a pinned Agent's, or one whose transcript changed
    // mid-run) has them already; a session restored mid-run missed the ones delivered to the Agent
    // that persisted it, so the output is authoritative.
    // (Only when `outputMissed`: an assign copies the context even when it changes nothing.)
    adoptRunOutput: assign(({ context, event }) => {
      const output = runOutput(event);
      if (context.messages.length === context.runStart) return { messages: context.messages.concat(output), usage: output.reduce(addMessageUsage, context.usage) };
      return { messages: context.messages.slice(0, context.runStart).concat(output) };
    }),
    // R55, R13: the failed run's messages are what its agent_end lists (a restored session may
    // have delivered some of its failure events twice).
    adoptFailureOutput: assign(({ context }) => {
      const end = context.failure.find((event) => event.type === "agent_end");
      if (context.runStart < 0 || !end || end.type !== "agent_end") return {};
      return { messages: context.messages.slice(0, context.runStart).concat(end.messages) };
    }),
    adoptResumedRun: assign(({ context, event }) => {
      assertEvent(event, "run.resume");
      return context.runStart < 0 ? {} : { messages: context.messages.slice(0, context.runStart).concat(event.messages) };
    }),
    enqueue: assign(({ context, event }) => {
      assertEvent(event, ["queue.steer", "queue.followUp"]);
      const queue: QueueName = event.type === "queue.steer" ? "steering" : "followUp";
      return { queues: { ...context.queues, [queue]: context.queues[queue].concat([event.message]) } };
    }),
    dequeue: assign(({ context, event }) => {
      assertEvent(event, "queue.take");
      return { queues: dequeued(context, event.queue, event.count) };
    }),
    clearQueue: assign(({ context, event }) => {
      assertEvent(event, "queue.clear");
      return { queues: event.queue === "all" ? emptyQueues() : { ...context.queues, [event.queue]: [] } };
    }),
    setQueueMode: assign(({ context, event }) => {
      assertEvent(event, "queue.setMode");
      return { modes: { ...context.modes, [event.queue]: event.mode } };
    }),
    // The transcript grows by a new array (the context is never changed in place), and the usage
    // totals by what the message cost: one assign (each copies the context). The Agent's
    // `state.messages`, one array across runs as the reference's, is the Agent's own copy, grown
    // as this one grows (src/agent/transcript-view.ts).
    joinTranscript: assign(({ context, event }) => {
      assertEvent(event, ["run.messageEnd", "run.messagesEnd"]);
      const ended = event.type === "run.messageEnd" ? [event.message] : event.messages;
      const messages = context.messages.concat(ended);
      const usage = ended.reduce(addMessageUsage, context.usage);
      return usage === context.usage ? { messages } : { messages, usage };
    }),
    // The reference keeps the error of the last failed turn until the next run starts (see `turnFailed`).
    recordTurnError: assign(({ event }) => {
      assertEvent(event, "run.turnEnd");
      return { errorMessage: turnError(event.message) };
    }),
    // R82: "always allow" for the rest of the session; the run gets the decision itself.
    allowForSession: assign(({ context, event }) => {
      assertEvent(event, "approval.approve");
      const approval = approvalsOf(context);
      return event.rule ? { approval: { ...approval, rules: withRule(approval.rules, event.rule) } } : {};
    }),
    forwardDecision: sendTo("run", ({ event }) => {
      assertEvent(event, ["approval.approve", "approval.reject"]);
      if (event.type === "approval.reject") return event;
      const { rule: _rule, ...decision } = event;
      return decision;
    }),
    // R54: the replayed prompt, sections and declared tools as one leading system message.
    reset: assign(({ context }) => {
      const system = currentSystemMessage(context.messages);
      return { messages: system ? [system] : [], queues: emptyQueues(), errorMessage: null };
    }),
  },
  guards: {
    // R54: the run's listeners have had every event it produced (provided by the runtime: its event queue is idle).
    listenersSettled: placeholderGuard("listenersSettled"),
    // R12, R13: the run's output is not what the transcript holds since the run started (a session
    // restored mid-run missed the messages delivered to the Agent that persisted it).
    outputMissed: ({ context, event }) => context.runStart >= 0 && context.messages.length - context.runStart !== runOutput(event).length,
    // The turn ended with an error message (an error or abort): the session keeps it.
    turnFailed: ({ event }) => {
      assertEvent(event, "run.turnEnd");
      return turnError(event.message) !== undefined;
    },
    // R12: the run ended before its listeners had every event; the output adopted at its end
    // holds this message already (by identity: it is the object the run appended).
    joinedWithOutput: ({ context, event }) => {
      assertEvent(event, "run.messageEnd");
      return context.runStart >= 0 && context.messages.indexOf(event.message, context.runStart) >= 0;
    },
  },
}).createMachine({
  id: "session",
  context: ({ input }) => input.context ?? initialSessionContext(input),
  // R53: queues and state can change at any time; a running run sees them at its next drain point.
  on: {
    "queue.steer": { actions: "enqueue" },
    "queue.followUp": { actions: "enqueue" },
    "queue.take": { actions: "dequeue" },
    "queue.clear": { actions: "clearQueue" },
    "queue.setMode": { actions: "setQueueMode" },
    // (A transcript replaced mid-run is the app's: the run's output is not adopted over it.)
    "session.setMessages": { actions: assign({ messages: ({ event }) => event.messages, runStart: -1 }) },
    "session.setModel": { actions: assign({ model: ({ event }) => event.model }) },
    "session.setThinkingLevel": { actions: assign({ thinkingLevel: ({ event }) => event.thinkingLevel }) },
    "run.messageEnd": { actions: "joinTranscript" },
    "run.messagesEnd": { actions: "joinTranscript" },
    "run.turnEnd": { guard: "turnFailed", actions: "recordTurnError" },
    "run.messageDiscarded": { actions: assign({ messages: ({ context }) => context.messages.slice(0, -1) }) },
    // (A copy: the event's array is the run's.)
    "run.transcriptReplaced": { actions: assign({ messages: ({ event }) => event.messages.slice(), runStart: ({ event }) => event.messages.length }) },
    "run.resume": { actions: "adoptResumedRun" },
    "approval.clearRules": { actions: assign({ approval: ({ context }) => ({ ...approvalsOf(context), rules: [] }) }) },
  },
  initial: "idle",
  states: {
    idle: {
      on: {
        // R52: prompt() and continue() are refused by the Agent while busy; RUN is only taken here.
        "run.start": { target: "busy", actions: "beginRun" },
        // R54: refused by the Agent while busy.
        "session.reset": { actions: "reset" },
      },
    },
    busy: {
      initial: "running",
      on: {
        // R54: the signal the listeners hold is aborted even after agent_end.
        "run.abort": { actions: "abortRun" },
        // R55: a listener threw (during the run or at agent_end).
        "sink.failed": { target: ".failing", actions: assign({ failure: ({ event }) => event.events }) },
      },
      states: {
        running: {
          invoke: {
            id: "run",
            src: "run",
            // R82: the run numbers its approvals under this run's prefix and follows the session's rules.
            input: ({ context, event }) => {
              assertEvent(event, "run.start");
              const { runs, rules } = approvalsOf(context);
              return { ...event.input, host: event.host, approval: { idPrefix: approvalPrefix(runs), rules } };
            },
            // R54: agent_end was emitted; idle at once when the listeners have had every event (no
            // actor to wait for nothing, issue 40; and no transient state between: a microstep per
            // prompt), else busy while they settle.
            onDone: [
              { guard: and(["outputMissed", "listenersSettled"]), target: "#session.idle", actions: ["adoptRunOutput", "finishRun"] },
              { guard: "outputMissed", target: "settling", actions: "adoptRunOutput" },
              { guard: "listenersSettled", target: "#session.idle", actions: "finishRun" },
              { target: "settling" },
            ],
            // R55: closed with a failure message through the run's event queue, which the listeners then settle.
            onError: { target: "settling", actions: { type: "endAfterDefect", params: ({ event }) => ({ error: event.error }) } },
          },
          // R82: decisions for the run's waiting calls.
          on: {
            "approval.approve": { actions: ["allowForSession", "forwardDecision"] },
            "approval.reject": { actions: "forwardDecision" },
          },
          initial: "active",
          states: {
            active: {
              on: { "run.abort": "aborting" },
            },
            // R29, R6: the signal is aborted; the run winds down to agent_end on its own.
            aborting: {
              // `abortRun` aborts the signal; the run is told by the machine (sent after this step,
              // so what it settles at once, R82's waiting calls, is not nested in a custom action).
              entry: ["abortRun", sendTo("run", { type: "run.abort" })],
            },
          },
        },
        // R54: busy until the listeners settle. A run that ended at once after its last message (a
        // failure, an error response, a runtime defect) may still be delivering it.
        settling: {
          on: { "run.messageEnd": { guard: "joinedWithOutput" } },
          invoke: {
            src: "settleEvents",
            input: ({ context }) => ({ host: context.host }),
            onDone: { target: "#session.idle", actions: "finishRun" },
            onError: { target: "#session.idle", actions: "finishRun" },
          },
        },
        // R55: the run is stopped; its failure message, turn_end and agent_end go to the listeners.
        failing: {
          invoke: {
            src: "emitFailure",
            // The events were fixed when the listener threw (plain data: a restored session delivers the same).
            input: ({ context }) => ({ host: context.host, events: context.failure }),
            onDone: { target: "#session.idle", actions: ["adoptFailureOutput", "finishRun"] },
            onError: { target: "#session.idle", actions: "finishRun" },
          },
        },
      },
    },
  },
});

/** A new session's context. */
export function initialSessionContext(input: SessionInput): SessionContext {
  return {
    host: input.host,
    messages: input.messages,
    model: input.model,
    thinkingLevel: input.thinkingLevel,
    queues: emptyQueues(),
    modes: (input.steeringMode ?? "one-at-a-time") === "one-at-a-time" && (input.followUpMode ?? "one-at-a-time") === "one-at-a-time" ? defaultModes : { steering: input.steeringMode ?? "one-at-a-time", followUp: input.followUpMode ?? "one-at-a-time" },
    errorMessage: null,
    usage: emptyUsage(),
    runStart: input.messages.length,
    failure: [],
    approval: noApprovals,
  };
}

/** The messages a finished run added (its output). */
const runOutput = (event: unknown): AgentMessage[] => (event as { output?: AgentMessage[] }).output ?? [];


/** Shared by every new session (issue 19: an idle Agent's context stays small); replaced, never mutated. */
const noApprovals: SessionApprovals = { runs: 0, rules: [] };

/** R82: run N's approval ids (N counts the session's runs from 1). */
export const approvalPrefix = (run: number): string => `approval-${run}-`;

/** R82: the session's approvals (a snapshot from before approvals existed has none). */
export const approvalsOf = (context: SessionContext): SessionApprovals => context.approval ?? noApprovals;

/** The queues after the first `count` messages of `queue` left it. */
function dequeued(context: SessionContext, queue: QueueName, count: number): Record<QueueName, AgentMessage[]> {
  return { ...context.queues, [queue]: context.queues[queue].slice(count) };
}

/** What `queue`'s next drain point would take (R53). */
export function nextBatch(context: SessionContext, queue: QueueName): AgentMessage[] {
  return takeBatch(context.queues[queue], context.modes[queue]);
}
