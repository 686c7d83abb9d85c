/**
 * An agent session as a keyed Restate virtual object (SPEC R90).
 *
 * - `prompt` (exclusive: one run per session at a time, Restate's keyed exclusivity is R84's single
 *   writer) runs the run machine in the handler; every job (model request, hook, tool preparation,
 *   each tool execution) is a journaled step (`journaled-steps.ts`), so a worker that dies mid-run
 *   is replaced by another that continues from the journal, re-running no completed step.
 * - The transcript is the object's state (`messages`); each run starts from it and appends what it
 *   added when it ends.
 * - Events: every event of a run is appended to the object's state as it happens (`event:<n>`),
 *   numbered per session and flagged provisional as the embedded store numbers and flags them (R81:
 *   the same numbering code); the shared handler `events({after})` returns those after an id, so a
 *   client resumes from the last id it saw after a reconnect. Shared handlers see the state an
 *   exclusive handler wrote while it still runs (measured), so a client follows a run live, at the
 *   granularity of steps (a step's deltas arrive together, when the step's outcome is journaled). A
 *   response journaled in parts (R70) and requested again after a worker died is preceded by a
 *   retraction of its earlier parts (`journaled-steps.ts`).
 * - `abort` (shared, so it is not queued behind the run it aborts) resolves the running run's
 *   awakeable; the run sees it in its delivery loop, in journal order.
 * - Approvals (R82) are awakeables: a call that waits for one is a pending journal entry, so the
 *   wait needs no running process; `approve`/`reject` (shared) resolve it, and the run receives the
 *   decision in journal order. Any worker may pick the run up again, and no sibling runs again.
 * - The run's own journal (R80's records, as the embedded store holds them) is written to the
 *   object's state too (`record:<n>`), as the run goes; the shared handler `journal({after})`
 *   returns it, so `replayRun` replays a session that ran on any number of workers offline, to the
 *   events its clients saw (R83 across workers). Restate's own journal is what makes the run
 *   durable; this one is what a developer replays, exports to a trace and keeps.
 * - Steering and follow-up messages go to a second keyed object, the session's inbox (its own
 *   exclusive handlers, so they are not queued behind the run either); the run's steering and
 *   follow-up polls are journaled calls that take what the inbox holds.
 */
import * as restate from "@restatedev/restate-sdk";
import { createActor } from "xstate";
import type { AgentMessage, AnyAgentEvent, ApprovalRule, ToolApprovalRequest } from "../types.js";
import { approvalPrefix } from "../../machines/session.machine.js";
import { agentEvents, createAgentRunLogic, type RecordedRunDelivery } from "../api/run-logic.js";
import type { AgentRunOptions } from "../actors/run-runtime.js";
import { JournaledSteps } from "./journaled-steps.js";
import type { Json, StoredRecord } from "../store/run-store.js";
import { guardedInspect, type InspectOption } from "../boundary/inspect-observer.js";
import { errorText } from "../protocol/tool-results.js";

export interface AgentSessionObjectOptions extends Omit<AgentRunOptions, "clock" | "executor"> {
  /** The session object's name in Restate (default `agentSession`); its inbox is `<name>Inbox`. */
  readonly name?: string;
  /**
   * Inspection observers of each run (e.g. `otelObserver`). They are told when an attempt replays
   * Restate's journal (R90, R83), so a step traced by an earlier attempt is not traced again.
   */
  readonly inspect?: InspectOption;
}

type Queue = "steer" | "followUp";

/** What `prompt` takes: a text (a user message stamped with journaled time) or messages. */
export interface PromptRequest {
  readonly text?: string;
  readonly messages?: AgentMessage[];
}

export interface PromptResponse {
  /** The messages the run added (R12). */
  readonly messages: AgentMessage[];
  /** The id of the run's last event. */
  readonly lastEventId: number;
}

export interface SessionEvent {
  /** 1, 2, … per session: the sequence number the embedded store gives the same event (R81). */
  readonly id: number;
  readonly event: AnyAgentEvent;
  /**
   * R81: written before the step that produced it ended (a streaming response's `message_start`
   * and `message_update`s, a tool's progress): a worker's death may retract it (`message_discarded`,
   * reason `interrupted`, with `fromSeq`: drop the provisional events from there on).
   */
  readonly provisional: boolean;
}

/** An event as the object's state holds it. */
interface StoredEvent {
  event: AnyAgentEvent;
  provisional: boolean;
}

export interface SessionState {
  readonly messages: AgentMessage[];
  readonly running: boolean;
  readonly lastEventId: number;
  /** R82: the calls of the running run that wait for a decision. */
  readonly pendingApprovals: ToolApprovalRequest[];
}

/** A decision on a waiting call, as the `approve`/`reject` handlers take it. */
export type ApprovalDecision =
  | { readonly approvalId: string; readonly decision: "approve"; readonly args?: unknown; readonly always?: true | { readonly path: string } }
  | { readonly approvalId: string; readonly decision: "reject"; readonly reason: string };

interface PendingApproval {
  readonly awakeableId: string;
  readonly request: ToolApprovalRequest;
}

const MESSAGES = "messages";
const EVENT_COUNT = "eventCount";
const ABORT = "abortAwakeable";
const eventKey = (id: number) => `event:${id}`;
const APPROVALS = "approvals";
const RECORD_COUNT = "recordCount";
/** R82: runs so far (each run's approval ids get their own prefix) and the session's "always allow" rules. */
const APPROVAL_RUNS = "approvalRuns";
const APPROVAL_RULES = "approvalRules";
const recordKey = (seq: number) => `record:${seq}`;

/**
 * The session object and its inbox: bind both to the worker's endpoint
 * (`endpoint.bind(session).bind(inbox)`). `config.getSteeringMessages` and `getFollowUpMessages`
 * are the inbox's (`steer` and `followUp` queue there); an app's own are not used.
 */
export function agentSessionObjects(options: AgentSessionObjectOptions) {
  const { name = "agentSession", inspect, ...run } = options;
  const queued = (queue: Queue) => `queue:${queue}`;

  const inbox = restate.object({
    name: `${name}Inbox`,
    handlers: {
      push: async (ctx: restate.ObjectContext, request: PromptRequest & { queue: Queue }): Promise<{ queued: number }> => {
        const queue = checkQueue(request?.queue);
        const messages = [...((await ctx.get<AgentMessage[]>(queued(queue))) ?? []), ...promptMessages(request, await ctx.date.now())];
        ctx.set(queued(queue), messages);
        return { queued: messages.length };
      },
      take: async (ctx: restate.ObjectContext, request: { queue: Queue }): Promise<AgentMessage[]> => {
        const queue = checkQueue(request?.queue);
        const messages = (await ctx.get<AgentMessage[]>(queued(queue))) ?? [];
        if (messages.length) ctx.clear(queued(queue));
        return messages;
      },
      /**
       * R82: the first decision on a waiting call wins. `approve` and `reject` are shared handlers
       * (they must not queue behind the run), so two can race on one call; this handler is exclusive
       * per session, and lets exactly one through (false: the call was decided already).
       */
      decide: async (ctx: restate.ObjectContext, request: { awakeableId: string; decision: ApprovalDecision }): Promise<boolean> => {
        const key = `decided:${request.awakeableId}`;
        if (await ctx.get<boolean>(key)) return false;
        ctx.set(key, true);
        ctx.resolveAwakeable<ApprovalDecision>(request.awakeableId, request.decision);
        return true;
      },
      /** The run that waited on these calls ended: their decisions are kept no longer (the object's state does not grow per approval). */
      forget: async (ctx: restate.ObjectContext, request: { awakeableIds: string[] }): Promise<void> => {
        for (const id of request?.awakeableIds ?? []) ctx.clear(`decided:${id}`);
      },
    },
  });

  const runOnce = async (ctx: restate.ObjectContext, input: { prompts?: AgentMessage[]; continue?: boolean }): Promise<PromptResponse> => {
    const startedAt = await ctx.date.now();
    const messages = (await ctx.get<AgentMessage[]>(MESSAGES)) ?? [];
    let lastEventId = (await ctx.get<number>(EVENT_COUNT)) ?? 0;
    const take = (queue: Queue) => () => ctx.objectClient(inbox, ctx.key).take({ queue });
    const steps = new JournaledSteps(ctx, startedAt, { getSteeringMessages: take("steer"), getFollowUpMessages: take("followUp") });
    const abort = ctx.awakeable<null>();
    ctx.set(ABORT, abort.id);

    // The polls' placeholders: the executor answers them from the inbox, so they never run.
    const polled = async (): Promise<AgentMessage[]> => [];
    const config = { ...run.config, getSteeringMessages: polled, getFollowUpMessages: polled };
    // R80, R83: the run's journal, record by record into the object's state (deterministic: a
    // replayed attempt writes the same records at the same points).
    let lastSeq = (await ctx.get<number>(RECORD_COUNT)) ?? 0;
    let delivery: RecordedRunDelivery | undefined;
    const journalTo = {
      // R81: the run's events are numbered on from the session's (as the embedded store numbers them).
      eventBase: lastEventId,
      append(record: Json): number {
        lastSeq += 1;
        ctx.set(recordKey(lastSeq), record);
        ctx.set(RECORD_COUNT, lastSeq);
        return lastSeq;
      },
      numberedBy(numbering: RecordedRunDelivery): void {
        delivery = numbering;
      },
    };
    const logic = createAgentRunLogic({ ...run, config, clock: steps.clock, executor: steps, journalTo });
    // R82: approval ids unique within the session, and its "always allow" rules across runs.
    const approvalRuns = ((await ctx.get<number>(APPROVAL_RUNS)) ?? 0) + 1;
    ctx.set(APPROVAL_RUNS, approvalRuns);
    const rules = (await ctx.get<ApprovalRule[]>(APPROVAL_RULES)) ?? [];
    // The replay indicator Restate's own `ctx.console` uses (telemetry only, never control flow).
    const processing = (ctx as unknown as Partial<restate.internal.ContextInternal>).isProcessing?.bind(ctx);
    const observe = guardedInspect(inspect, { kind: "run", ...(processing ? { replaying: () => !processing() } : {}) });
    const actor = createActor(logic, { input: { messages, ...input, approval: { idPrefix: approvalPrefix(approvalRuns), rules } }, ...(observe ? { inspect: observe } : {}) });
    // A run that cannot start (a malformed prompt; `continue` from an assistant tail, R52) is the
    // invocation's terminal error, not a throw XState would report outside it (killing the worker
    // on every retry of the same invocation).
    const refused = actor.getSnapshot();
    if (refused.status === "error") {
      ctx.clear(ABORT);
      throw new restate.TerminalError(`agent run on Restate cannot start: ${errorText(refused.error)}`);
    }
    // (Its failure is read from its snapshot below: this observer keeps XState from rethrowing it.)
    actor.subscribe({ error: () => {} });
    const approvals = new Map<string, PendingApproval>();
    /** Every wait this run made (their decisions, kept by the inbox, are forgotten at its end). */
    const waited: string[] = [];
    const saveApprovals = () => (approvals.size ? ctx.set(APPROVALS, Object.fromEntries(approvals)) : ctx.clear(APPROVALS));
    const numbering = () => delivery;
    steps.numbering = numbering;
    const subscription = agentEvents(actor).subscribe((event) => {
      // R81: the event's number and whether a crash may retract it, as the embedded store has them.
      const { seq, provisional } = numbering()!.current();
      lastEventId = seq;
      ctx.set(eventKey(seq), { event, provisional } satisfies StoredEvent);
      ctx.set(EVENT_COUNT, seq);
      // R82: each wait is an awakeable (created where the event is, so at the same point on replay).
      if (event.type === "tool_approval_requested") {
        const { type: _type, ...request } = event;
        const awakeable = ctx.awakeable<ApprovalDecision>();
        approvals.set(request.approvalId, { awakeableId: awakeable.id, request });
        waited.push(awakeable.id);
        saveApprovals();
        steps.watch(awakeable.promise, (decision) => {
          const at = steps.clock.now();
          actor.send(
            decision.decision === "approve"
              ? { type: "approval.approve", approvalId: request.approvalId, ...(decision.args !== undefined ? { args: decision.args } : {}), ...(decision.always ? { always: decision.always } : {}), at }
              : { type: "approval.reject", approvalId: request.approvalId, reason: decision.reason, at },
          );
        });
      }
      if (event.type === "tool_approval_resolved" && approvals.delete(event.approvalId)) saveApprovals();
    });
    steps.watch(abort.promise, () => actor.send({ type: "run.abort" }));
    actor.start();
    try {
      await steps.drive(() => actor.getSnapshot().status !== "active");
    } finally {
      subscription.unsubscribe();
    }
    const snapshot = actor.getSnapshot();
    if (snapshot.status !== "done") throw new restate.TerminalError(`agent run on Restate ended ${snapshot.status}: ${String(snapshot.error)}`);
    const added = snapshot.output as AgentMessage[];
    ctx.set(MESSAGES, [...messages, ...added]);
    const kept = (snapshot.context as { approval?: { rules?: ApprovalRule[] } }).approval?.rules ?? [];
    if (kept.length) ctx.set(APPROVAL_RULES, kept);
    ctx.clear(ABORT);
    ctx.clear(APPROVALS);
    if (waited.length) ctx.objectSendClient(inbox, ctx.key).forget({ awakeableIds: waited });
    return { messages: added, lastEventId };
  };

  /** R82: `decision` for the waiting call, unless another decision took it first (a terminal error then). */
  const decide = async (ctx: restate.ObjectSharedContext, pending: PendingApproval, decision: ApprovalDecision): Promise<void> => {
    const taken = await ctx.objectClient(inbox, ctx.key).decide({ awakeableId: pending.awakeableId, decision });
    if (!taken) throw new restate.TerminalError(`approval ${JSON.stringify(pending.request.approvalId)}: no call waits for it (already decided)`);
  };

  const session = restate.object({
    name,
    handlers: {
      /** R1: a run from the stored transcript with new prompt messages. */
      prompt: async (ctx: restate.ObjectContext, request: PromptRequest): Promise<PromptResponse> =>
        runOnce(ctx, { prompts: promptMessages(request, await ctx.date.now()) }),

      /** R2: a run that continues the stored transcript without a prompt. */
      continue: async (ctx: restate.ObjectContext): Promise<PromptResponse> => runOnce(ctx, { continue: true }),

      /** Queues a steering message for the running run (or the next one). */
      steer: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext, request: PromptRequest): Promise<{ queued: true }> => {
        ctx.objectSendClient(inbox, ctx.key).push({ ...request, queue: "steer" });
        return { queued: true };
      }),

      /** Queues a follow-up message: the running run takes it when it would end. */
      followUp: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext, request: PromptRequest): Promise<{ queued: true }> => {
        ctx.objectSendClient(inbox, ctx.key).push({ ...request, queue: "followUp" });
        return { queued: true };
      }),

      abort: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<{ aborted: boolean }> => {
        const id = await ctx.get<string>(ABORT);
        if (id) ctx.resolveAwakeable(id, null);
        return { aborted: Boolean(id) };
      }),

      /**
       * R82: runs a waiting call (`args` replace its arguments, validated again); `always: true`
       * (or `{path}`) allows this tool (or path) for the rest of the session, later runs included.
       * An unknown or settled id, or a malformed `always`, is a terminal error.
       */
      approve: restate.handlers.object.shared(
        async (ctx: restate.ObjectSharedContext, request: { approvalId: string; args?: unknown; always?: true | { path: string } }): Promise<{ approved: string }> => {
          const pending = await pendingApproval(ctx, request?.approvalId);
          const always = checkAlways(request.always);
          await decide(ctx, pending, {
            approvalId: pending.request.approvalId,
            decision: "approve",
            ...(request.args !== undefined ? { args: request.args } : {}),
            ...(always ? { always } : {}),
          });
          return { approved: pending.request.approvalId };
        },
      ),

      /** R82: gives a waiting call an error result with `reason`. */
      reject: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext, request: { approvalId: string; reason?: string }): Promise<{ rejected: string }> => {
        const pending = await pendingApproval(ctx, request?.approvalId);
        await decide(ctx, pending, { approvalId: pending.request.approvalId, decision: "reject", reason: typeof request.reason === "string" ? request.reason : "" });
        return { rejected: pending.request.approvalId };
      }),

      state: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<SessionState> => ({
        messages: (await ctx.get<AgentMessage[]>(MESSAGES)) ?? [],
        running: Boolean(await ctx.get<string>(ABORT)),
        lastEventId: (await ctx.get<number>(EVENT_COUNT)) ?? 0,
        pendingApprovals: Object.values((await ctx.get<Record<string, PendingApproval>>(APPROVALS)) ?? {}).map((pending) => pending.request),
      })),

      /** R83: the session's journal records after `after` (default 0), at most `limit` (default 500), as `replayRun` takes them, and the last sequence number so far. */
      journal: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext, request: PageRequest): Promise<{ records: StoredRecord[]; lastSeq: number }> => {
        const { items, last } = await readPage<Json>(ctx, RECORD_COUNT, recordKey, request);
        return { records: items.map(({ n, value }) => ({ seq: n, record: value })), lastSeq: last };
      }),

      /** The session's events after `after` (default 0), at most `limit` (default 500), and the last id so far. */
      events: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext, request: PageRequest): Promise<{ events: SessionEvent[]; lastEventId: number }> => {
        const { items, last } = await readPage<StoredEvent>(ctx, EVENT_COUNT, eventKey, request);
        return { events: items.map(({ n, value }) => ({ id: n, event: value.event, provisional: value.provisional === true })), lastEventId: last };
      }),
    },
  });
  return { session, inbox };
}

type PageRequest = { after?: number; limit?: number } | null;

/** The entries numbered after `request.after` (default 0) of a numbered log in the object's state, at most `limit` (default 500), and its last number. */
async function readPage<T>(ctx: restate.ObjectSharedContext, countKey: string, keyOf: (n: number) => string, request: PageRequest): Promise<{ items: { n: number; value: T }[]; last: number }> {
  const last = (await ctx.get<number>(countKey)) ?? 0;
  const after = pageNumber(request?.after, 0, "after");
  const until = Math.min(last, after + Math.max(1, pageNumber(request?.limit, 500, "limit")));
  const items: { n: number; value: T }[] = [];
  for (let n = after + 1; n <= until; n++) {
    const value = await ctx.get<T>(keyOf(n));
    if (value !== null && value !== undefined) items.push({ n, value });
  }
  return { items, last };
}

/** A page request's number (a whole number ≥ 0; absent: `fallback`), or a terminal error: a client polling with `"abc"` would wait forever on empty pages. */
function pageNumber(value: unknown, fallback: number, name: string): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) throw new restate.TerminalError(`\`${name}\` must be a whole number ≥ 0, got ${JSON.stringify(value)}`);
  return value;
}

/** The waiting call `approvalId` names, or a terminal error (R82: an unknown or settled id is refused). */
async function pendingApproval(ctx: restate.ObjectSharedContext, approvalId: unknown): Promise<PendingApproval> {
  if (typeof approvalId !== "string") throw new restate.TerminalError("approval: `approvalId` must be a string");
  const pending = ((await ctx.get<Record<string, PendingApproval>>(APPROVALS)) ?? {})[approvalId];
  if (!pending) throw new restate.TerminalError(`approval ${JSON.stringify(approvalId)}: no call waits for it (unknown, or already decided)`);
  return pending;
}

function checkAlways(always: unknown): true | { path: string } | undefined {
  if (always === undefined || always === null || always === false) return undefined;
  if (always === true) return true;
  // (A path rule names a path: an empty one would match nothing and read as "always", as the Agent refuses it.)
  if (typeof always === "object" && typeof (always as { path?: unknown }).path === "string" && (always as { path: string }).path !== "") return { path: (always as { path: string }).path };
  throw new restate.TerminalError(`approve: \`always\` must be true or { path: string }, got ${JSON.stringify(always)}`);
}

function checkQueue(queue: unknown): Queue {
  if (queue === "steer" || queue === "followUp") return queue;
  throw new restate.TerminalError(`inbox: queue must be "steer" or "followUp", got ${JSON.stringify(queue)}`);
}

function promptMessages(request: PromptRequest, timestamp: number): AgentMessage[] {
  if (request?.messages) return request.messages;
  if (typeof request?.text === "string") return [{ role: "user", content: [{ type: "text", text: request.text }], timestamp }];
  throw new restate.TerminalError("prompt: give `text` or `messages`");
}
