/**
 * Property-based tests of the whole loop: random scenarios (1–6 responses, 0–5 tool calls each,
 * random tool outcomes, hook decisions, queue arrivals, stop reasons, aborts, and with recovery on
 * (R60–R62: retry / outputLimit / compact each randomly configured) transient failures before and
 * after content, truncations and overflows; see scenario.ts) played by the real runtime on a virtual
 * clock, checked against the invariants every run must keep, the loop's own events included.
 *
 * Runs: FUZZ_RUNS (default 1000; `npm run test:fuzz` sets 20000). Seed: FUZZ_SEED, else random;
 * printed either way. A failure prints the seed, the path and the shrunk scenario (fast-check).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { eventProblems, transcriptProblems } from "./invariants.js";
import { playScenario, scenarioArb, type CallSpec, type ResponseSpec, type Scenario, type ScenarioRun } from "./scenario.js";
import { liveActorProblems } from "../model/harness.js";
import type { AgentEvent, AgentMessage, AnyAgentEvent, AssistantMessage, ToolResultMessage } from "../../src/index.js";
import { scriptedModel } from "../../src/index.js";

const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const FIXED_SEED = process.env.FUZZ_SEED !== undefined;
const SEED = FIXED_SEED ? Number(process.env.FUZZ_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;

/** Every invariant a run must keep; empty when the run is sound. */
export function scenarioProblems(scenario: Scenario, run: ScenarioRun): string[] {
  const problems: string[] = [];
  if (run.rejection !== undefined) problems.push(`the loop rejected: ${String(run.rejection)}`);
  problems.push(...eventProblems(run.events, run.messages));
  const finalContext = run.actor ? (run.actor.getSnapshot().context as { messages: AgentMessage[] }).messages : undefined;
  problems.push(...transcriptProblems(run.events, [], finalContext));
  problems.push(...recoveryProblems(scenario, run));
  if (run.lateEvents > 0) problems.push(`${run.lateEvents} events after the run settled`);
  problems.push(...(run.actor ? liveActorProblems(run.actor) : ["onActor was never called"]));
  problems.push(...run.hookProblems);

  // R29: after an abort no tool starts executing, at most one more request is made, and that
  // request is answered `aborted`, which ends the run (R6).
  if (run.executedAfterAbort.length > 0) problems.push(`R29: tools executed after the abort: ${run.executedAfterAbort.join(", ")}`);
  if (run.abortedAt !== null) {
    if (run.requestsAfterAbort > 1) problems.push(`R29: ${run.requestsAfterAbort} requests after the abort`);
    const assistants = run.events.flatMap((e) => (e.type === "message_end" && (e.message as AssistantMessage).role === "assistant" ? [e.message as AssistantMessage] : []));
    const last = assistants[assistants.length - 1];
    if (run.requestsAfterAbort === 1 && scenario.hookThrows === "none" && last?.stopReason !== "aborted") {
      problems.push(`R29: the request after the abort ended with ${last?.stopReason}, not aborted`);
    }
  }

  // R8: finishTurn's `end` is followed by agent_end and nothing else.
  const turnEnds = run.events.flatMap((e, i) => (e.type === "turn_end" ? [i] : []));
  run.decisions.forEach((decision, k) => {
    if (decision !== "end" || turnEnds[k] === undefined) return;
    const after = run.events.slice(turnEnds[k] + 1).map((e) => e.type);
    if (JSON.stringify(after) !== JSON.stringify(["agent_end"])) problems.push(`R8: after finishTurn's end came ${after.slice(0, 5).join(", ")}`);
  });
  problems.push(...requestReasonProblems(scenario, run));
  problems.push(...batchShapeProblems(scenario, run));
  problems.push(...preflightProblems(run));
  problems.push(...toolOracleProblems(scenario, run));
  return problems;
}

type ToolEnd = Extract<AgentEvent, { type: "tool_execution_end" }>;

const isAssistantEnd = (event: AnyAgentEvent | undefined): event is Extract<AnyAgentEvent, { type: "message_end" }> =>
  event?.type === "message_end" && (event.message as { role: string }).role === "assistant";
const hasCalls = (message: AssistantMessage) => message.content.some((block) => block.type === "toolCall");

/**
 * R60–R62, R66 as an oracle over the scenario's recovery settings and the attempts it scripted:
 * the loop's events appear only for what is configured; only a transient failure before content is
 * retried, numbered per request, after exactly the full-jitter backoff (or the retry-after) on the
 * run's clock; an escalation discards the truncated answer it follows, once per request; recovery
 * messages are the loop's, at most maxRecoveries in a row; a replacement is the compactor's output;
 * the end reason follows the last response.
 */
function recoveryProblems(scenario: Scenario, run: ScenarioRun): string[] {
  const problems: string[] = [];
  const recovery = scenario.recovery;
  const count = (type: string) => run.events.filter((event) => event.type === type).length;
  // R66: emitted only when their mechanism is configured.
  if (!recovery?.retry && count("retry_scheduled") > 0) problems.push("R66: retry_scheduled without retry");
  if (!recovery?.outputLimit && count("message_discarded") + count("output_limit_escalated") + count("output_limit_recovery") > 0) problems.push("R66: output-limit events without outputLimit");
  if (recovery?.outputLimit?.escalate === false && count("output_limit_escalated") > 0) problems.push("R61: escalated although the request already asked for the model's maximum");
  if (!recovery?.compact && count("transcript_replaced") > 0) problems.push("R66: transcript_replaced without compact");

  // R60: what was retried, its number within the request, and its delay.
  let failedInRequest = 0;
  let beforeLastEnd = 0;
  let retryIndex = 0;
  run.events.forEach((event, i) => {
    if (isAssistantEnd(event)) [beforeLastEnd, failedInRequest] = [failedInRequest, 0];
    // An escalation asks again within the same request (R61).
    if (event.type === "message_discarded") failedInRequest = beforeLastEnd;
    if (event.type !== "retry_scheduled") return;
    failedInRequest++;
    const { failed } = run.retries[retryIndex++] ?? { failed: null };
    const retry = recovery?.retry;
    if (!retry) return;
    if (failed?.kind !== "transient" || failed.afterContent) problems.push(`R60: #${i} retried ${JSON.stringify(failed)}, not a transient failure before content`);
    if (event.attempt !== failedInRequest + 1) problems.push(`R60: #${i} retry_scheduled.attempt ${event.attempt}, expected ${failedInRequest + 1}`);
    if (event.attempt > retry.maxAttempts || event.maxAttempts !== retry.maxAttempts) problems.push(`R60: #${i} attempt ${event.attempt} of ${event.maxAttempts} (maxAttempts ${retry.maxAttempts})`);
    const ceiling = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (event.attempt - 2));
    const expected = Math.max(Math.floor(recovery.jitter * ceiling), failed?.kind === "transient" ? (failed.retryAfterMs ?? 0) : 0);
    if (event.delayMs !== expected) problems.push(`R60: #${i} delay ${event.delayMs} ms, expected ${expected} (ceiling ${ceiling}, jitter ${recovery.jitter})`);
  });
  // Each wait is one timer of its delay on the run's clock (a zero wait sets none).
  const waits = run.retries.map(({ event }) => event.delayMs).filter((ms) => ms > 0);
  if (run.abortedAt === null && JSON.stringify(run.timers) !== JSON.stringify(waits)) problems.push(`R60: timers ${JSON.stringify(run.timers)} for waits ${JSON.stringify(waits)}`);

  // R61: an escalation discards the truncated answer just closed, then says so, once per request.
  run.events.forEach((event, i) => {
    if (event.type !== "message_discarded") return;
    const before = run.events[i - 1];
    const truncated = isAssistantEnd(before) && (before.message as AssistantMessage).stopReason === "length" && !hasCalls(before.message as AssistantMessage);
    if (!truncated) problems.push(`R61: #${i} message_discarded does not follow a truncated answer without calls`);
    const after = run.events[i + 1];
    if (after?.type !== "output_limit_escalated" || after.toMaxTokens !== scriptedModel.maxTokens) problems.push(`R61: #${i} message_discarded not followed by output_limit_escalated to ${scriptedModel.maxTokens}`);
    const previousEnd = run.events.slice(0, i - 1).map(isAssistantEnd).lastIndexOf(true);
    if (previousEnd >= 0 && run.events[previousEnd + 1]?.type === "message_discarded") problems.push(`R61: #${i} a second escalation in one request`);
  });
  // R61: each recovery message follows its event, marked as the loop's; at most maxRecoveries in a row.
  let inARow = 0;
  run.events.forEach((event, i) => {
    if (isAssistantEnd(event) && (event.message as AssistantMessage).stopReason !== "length") inARow = 0;
    if (event.type !== "output_limit_recovery") return;
    inARow++;
    const limit = recovery?.outputLimit;
    if (limit && (event.attempt !== inARow || event.maxRecoveries !== limit.maxRecoveries || inARow > limit.maxRecoveries)) {
      problems.push(`R61: #${i} recovery ${event.attempt} of ${event.maxRecoveries}, expected ${inARow} of ${limit.maxRecoveries}`);
    }
    // Injected with the next turn's messages (after prepareNextTurn's, R4b), before its request.
    const rest = run.events.slice(i + 1);
    const nextRequest = rest.findIndex((e) => isAssistantEnd(e) || e.type === "agent_end");
    const marked = rest
      .slice(0, nextRequest < 0 ? undefined : nextRequest)
      .some((e) => e.type === "message_end" && (e.message as { role: string }).role === "user" && (e.message as { recovery?: string }).recovery === "output_limit");
    const closing = rest[nextRequest];
    // (An abort, or a hook that threw (R56), may end the run before the next turn injects it.)
    const endedFirst = closing?.type === "agent_end" || run.abortedAt !== null || ((closing as { message?: AssistantMessage })?.message?.errorMessage ?? "").includes("(scenario)");
    if (!marked && !endedFirst) problems.push(`R61: #${i} output_limit_recovery not followed by the loop's recovery message before the next request`);
  });

  // R62: each replacement is what the compactor returned (one that found nothing replaces nothing:
  // the transcript itself back, or messages equal to it one by one).
  const replacements = run.compactions.filter((compaction) => compaction.output !== compaction.input && JSON.stringify(compaction.output) !== JSON.stringify(compaction.input));
  const replaced = run.events.filter((event) => event.type === "transcript_replaced");
  if (run.abortedAt === null && JSON.stringify(replaced.map((event) => event.messages)) !== JSON.stringify(replacements.map((c) => c.output))) {
    problems.push(`R62: transcript_replaced ${replaced.length} times for ${replacements.length} compactions that replaced`);
  }
  replaced.forEach((event) => {
    if (!run.compactions.some((c) => c.reason === event.reason)) problems.push(`R62: transcript_replaced for ${event.reason} without such a compaction`);
  });

  // R63, R61, R62: the end reason follows the last response.
  const end = run.events.at(-1);
  const last = [...run.events].reverse().find(isAssistantEnd)?.message as AssistantMessage | undefined;
  if (end?.type === "agent_end" && run.abortedAt === null && scenario.hookThrows === "none") {
    if (end.reason === "max_output_tokens" && !(recovery?.outputLimit && last?.stopReason === "length" && !hasCalls(last))) problems.push("R61: max_output_tokens without a truncated last answer");
    if (end.reason === "prompt_too_long" && !(recovery?.compact && last?.contextOverflow)) problems.push("R62: prompt_too_long without an overflowing last request");
    if (recovery?.compact && last?.contextOverflow && end.reason !== "prompt_too_long") problems.push(`R62: the run ended on an overflow with reason ${end.reason}`);
    if (!recovery?.compact && last?.contextOverflow && end.reason !== "error") problems.push(`R62: an overflow without compact ended with ${end.reason}`);
  }
  return problems;
}

/**
 * R24, R25, R28: the shape of each batch. Sequential (and truncated) batches run each call to its
 * result message before the next starts; parallel batches start every call before any executed
 * call ends, and emit every result message after the last end.
 */
function batchShapeProblems(scenario: Scenario, run: ScenarioRun): string[] {
  const problems: string[] = [];
  let response: AssistantMessage | undefined;
  let batch: string[] = [];
  const check = () => {
    if (!response || response.stopReason === "error" || response.stopReason === "aborted") return;
    const calls = response.content.filter((b) => b.type === "toolCall") as { id: string; name: string }[];
    if (calls.length === 0) return;
    const sequential = response.stopReason === "length" || scenario.toolExecution === "sequential" || calls.some((c) => c.name === "seq");
    if (sequential) {
      const expected = calls.flatMap((c) => [`start ${c.id}`, `end ${c.id}`, `result ${c.id}`]);
      const actual = batch.filter((entry) => !entry.startsWith("update") && !entry.startsWith("resultEnd")).map((entry) => entry.replace(/\+$/, ""));
      if (JSON.stringify(actual) !== JSON.stringify(expected)) problems.push(`R24/R28: sequential batch ran as ${actual.join(", ")}`);
    } else {
      const lastStart = batch.map((e) => e.startsWith("start")).lastIndexOf(true);
      const firstExecutedEnd = batch.findIndex((e) => e.startsWith("end") && e.endsWith("+"));
      const lastEnd = batch.map((e) => e.startsWith("end")).lastIndexOf(true);
      const firstResult = batch.findIndex((e) => e.startsWith("result"));
      if (firstExecutedEnd >= 0 && firstExecutedEnd < lastStart) problems.push(`R25: a parallel call finished executing before every call started: ${batch.join(", ")}`);
      if (firstResult >= 0 && firstResult < lastEnd) problems.push(`R25: a parallel result message came before the last tool_execution_end: ${batch.join(", ")}`);
    }
  };
  for (const event of run.events) {
    if (event.type === "message_end" && (event.message as AssistantMessage).role === "assistant") {
      check();
      response = event.message as AssistantMessage;
      batch = [];
    } else if (event.type === "tool_execution_start") batch.push(`start ${event.toolCallId}`);
    else if (event.type === "tool_execution_update") batch.push(`update ${event.toolCallId}`);
    else if (event.type === "tool_execution_end") batch.push(`end ${event.toolCallId}${(event as ToolEnd).durationMs !== undefined ? "+" : ""}`);
    else if (event.type === "message_start" && (event.message as { role: string }).role === "toolResult") batch.push(`result ${(event.message as ToolResultMessage).toolCallId}`);
    else if (event.type === "message_end" && (event.message as { role: string }).role === "toolResult") batch.push(`resultEnd`);
  }
  check();
  return problems;
}

/**
 * R21, R24, R25: a call's preflight (`prepareArguments`, `beforeToolCall`) starts only after its own
 * `tool_execution_start` was given to the sink (that it was delivered, for an async sink, is the
 * "emit not awaited" check), and the next call of the batch starts only after it finished: calls
 * are started and prepared one by one, in both modes.
 */
function preflightProblems(run: ScenarioRun): string[] {
  const problems: string[] = [];
  const startAt = new Map<string, number>();
  run.events.forEach((event, i) => {
    if (event.type === "tool_execution_start") startAt.set(event.toolCallId, i);
  });
  for (const preflight of run.preflights) {
    const start = startAt.get(preflight.id);
    if (start === undefined || start >= preflight.enteredAt) problems.push(`R21: ${preflight.step} of ${preflight.id} ran before its tool_execution_start`);
  }
  for (const event of run.events) {
    if (event.type !== "message_end" || (event.message as { role: string }).role !== "assistant") continue;
    const ids = (event.message as AssistantMessage).content.flatMap((block) => (block.type === "toolCall" ? [block.id] : []));
    ids.forEach((id, k) => {
      const next = k + 1 < ids.length ? startAt.get(ids[k + 1]) : undefined;
      if (next === undefined) return;
      for (const preflight of run.preflights) {
        if (preflight.id === id && preflight.finishedAt > next) problems.push(`R24/R25: ${ids[k + 1]} started before ${preflight.step} of ${id} finished`);
      }
    });
  }
  return problems;
}

/**
 * R21–R23, R27 as an oracle (runs without an abort only): which calls execute, which reach the
 * tool hooks, and each call's isError / terminate, computed from the scenario.
 */
function toolOracleProblems(scenario: Scenario, run: ScenarioRun): string[] {
  const problems: string[] = [];
  const specs = new Map<string, CallSpec & { stop: ResponseSpec["stop"] }>(scenario.responses.flatMap((r, ri) => r.calls.map((c, ci) => [`r${ri}c${ci}`, { ...c, stop: r.stop }] as const)));
  const executed = new Set(run.executed);
  if (run.executed.length !== executed.size) problems.push("R22: a call executed twice");
  if (run.afterCalls.some((id) => !executed.has(id))) problems.push("R23: afterToolCall ran for a call that did not execute");
  if (new Set(run.afterCalls).size !== run.afterCalls.length) problems.push("R23: afterToolCall ran twice for a call");
  if (scenario.afterToolCall && run.afterCalls.length !== executed.size) problems.push("R23: an executed call skipped afterToolCall");
  if (new Set(run.beforeCalls).size !== run.beforeCalls.length) problems.push("R21: beforeToolCall ran twice for a call");
  if (run.abortedAt !== null) return problems;

  for (const event of run.events) {
    if (event.type !== "tool_execution_end") continue;
    const spec = specs.get(event.toolCallId)!;
    const hasPrepareArguments = spec.tool === "alpha" || spec.tool === "seq";
    const prepared = spec.stop === "natural" && spec.tool !== "missing" && !(hasPrepareArguments && spec.prepareThrows) && !spec.badArgs;
    const gated = prepared && scenario.beforeToolCall;
    if (gated !== run.beforeCalls.includes(event.toolCallId)) problems.push(`R21: beforeToolCall ${gated ? "skipped" : "ran"} for ${event.toolCallId}`);
    const runs = prepared && (!scenario.beforeToolCall || spec.before === "allow");
    if (runs !== executed.has(event.toolCallId)) problems.push(`R21/R22: ${event.toolCallId} ${runs ? "did not execute" : "executed"}`);
    let isError = true;
    let terminate = !runs && gated && spec.before === "blockTerminate";
    if (runs) {
      isError = spec.outcome === "throw" || spec.outcome === "isError";
      terminate = spec.outcome === "terminate";
      if (scenario.afterToolCall) {
        if (spec.after === "throw") [isError, terminate] = [true, false];
        if (spec.after === "flipError") isError = true;
        if (spec.after === "terminate") terminate = true;
      }
    }
    const result = event.result as { terminate?: boolean; isError?: boolean };
    if (event.isError !== isError) problems.push(`R21–R23: ${event.toolCallId} isError ${event.isError}, expected ${isError}`);
    if ((result.terminate === true) !== terminate) problems.push(`R21/R23/R27: ${event.toolCallId} terminate ${result.terminate}, expected ${terminate}`);
  }
  return problems;
}

interface TurnSummary {
  /** Steering or follow-up messages injected at the turn's start. */
  injected: boolean;
  /** What was injected before the response: "a" prepared, "b" steering/follow-up. */
  injectedOrder: string[];
  response: AssistantMessage | undefined;
  results: number;
  /** Every finalized result of the batch says terminate (R27). */
  allTerminate: boolean;
  failed: boolean;
}

function turnsOf(run: ScenarioRun): TurnSummary[] {
  const turns: TurnSummary[] = [];
  let turn: TurnSummary | undefined;
  let terminates: boolean[] = [];
  for (const event of run.events) {
    if (event.type === "turn_start") {
      turn = { injected: false, injectedOrder: [], response: undefined, results: 0, allTerminate: false, failed: false };
      terminates = [];
      turns.push(turn);
    }
    if (!turn) continue;
    if (event.type === "message_end") {
      const message = event.message as { role: string; content?: unknown };
      // R61: the loop's recovery message is queued like steering.
      const queued = /^(steer|follow)/.test(String(message.content)) || (message as { recovery?: string }).recovery === "output_limit";
      if (message.role === "user" && queued && !turn.response) {
        turn.injected = true;
        turn.injectedOrder.push("b");
      }
      if (message.role === "user" && String(message.content).startsWith("prepared") && !turn.response) turn.injectedOrder.push("a");
      if (message.role === "assistant") turn.response = event.message as AssistantMessage;
      if (message.role === "toolResult") turn.results++;
    }
    if (event.type === "tool_execution_end") terminates.push((event.result as { terminate?: boolean }).terminate === true);
    if (event.type === "turn_end") {
      turn.allTerminate = terminates.length > 0 && terminates.every(Boolean);
      const message = event.message as AssistantMessage;
      turn.failed = message.stopReason === "error" || message.stopReason === "aborted";
    }
  }
  return turns;
}

/**
 * R8–R11, R27: a further request is made exactly when something asks for one: tool results to
 * answer (unless every result terminates), injected steering or follow-up messages, or a
 * `continue` decision; an `end` decision or a failed response ends the run.
 */
function requestReasonProblems(scenario: Scenario, run: ScenarioRun): string[] {
  const problems: string[] = [];
  const turns = turnsOf(run);
  const decision = (k: number) => (scenario.finishTurn ? (run.decisions[k] ?? "none") : "none");
  const answersResults = (t: TurnSummary) => t.results > 0 && !t.allTerminate;
  turns.forEach((turn, k) => {
    // R4b: messages from prepareNextTurn are injected before pending steering/follow-ups.
    if (turn.injectedOrder.join("") !== [...turn.injectedOrder].sort().join("")) problems.push(`R4b: turn ${k} injected ${turn.injectedOrder.join(", ")}`);
    const next = turns[k + 1];
    // A hook that threw (R56) closes the run with a failure turn of its own: no request behind it.
    if (next && !next.response?.errorMessage?.includes("(scenario)")) {
      if (turn.failed) problems.push(`R6: turn ${k} failed but turn ${k + 1} followed`);
      else if (decision(k) === "end") problems.push(`R8: turn ${k} decided end but turn ${k + 1} followed`);
      else if (!answersResults(turn) && !next.injected && decision(k) !== "continue") {
        problems.push(`R9/R10/R27: turn ${k + 1} was requested without tool results, queued messages or continue`);
      }
    } else if (!next && !turn.failed && turn.response && decision(k) !== "end") {
      if (answersResults(turn)) problems.push(`R9: the run ended with turn ${k}'s tool results unanswered`);
      // R61: exhausted output-limit recoveries end the run whatever finishTurn decided.
      const endReason = (run.events.at(-1) as { reason?: string } | undefined)?.reason;
      if (decision(k) === "continue" && endReason !== "max_output_tokens") problems.push(`R10: turn ${k} decided continue but no request followed`);
    }
  });
  return problems;
}

describe("agent loop: properties", () => {
  it(`every random scenario keeps the run invariants (${RUNS} runs, seed ${SEED})`, async () => {
    console.log(`property suite: ${RUNS} runs, seed ${SEED} (FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} to replay)`);
    const started = performance.now();
    // How many runs exercised each recovery mechanism (R60–R62): the property must reach them.
    const seen = { retry_scheduled: 0, message_discarded: 0, output_limit_recovery: 0, transcript_replaced: 0, backoffTimer: 0, retriesExhausted: 0, overflowCompacted: 0, promptTooLong: 0, maxOutputTokens: 0 };
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        const run = await playScenario(scenario);
        expect(scenarioProblems(scenario, run).slice(0, 6)).toEqual([]);
        for (const type of ["retry_scheduled", "message_discarded", "output_limit_recovery", "transcript_replaced"] as const) {
          if (run.events.some((event) => event.type === type)) seen[type]++;
        }
        if (run.timers.length > 0) seen.backoffTimer++;
        const last = [...run.events].reverse().find(isAssistantEnd)?.message as AssistantMessage | undefined;
        if (scenario.recovery?.retry && last?.retry?.retryable) seen.retriesExhausted++;
        if (run.events.some((event) => event.type === "transcript_replaced" && event.reason === "overflow")) seen.overflowCompacted++;
        const reason = (run.events.at(-1) as { reason?: string } | undefined)?.reason;
        if (reason === "prompt_too_long") seen.promptTooLong++;
        if (reason === "max_output_tokens") seen.maxOutputTokens++;
      }),
      { numRuns: RUNS, seed: SEED },
    );
    console.log(`property suite: ${RUNS} runs in ${((performance.now() - started) / 1000).toFixed(1)} s; runs with ${JSON.stringify(seen)}`);
    if (RUNS >= 500) {
      for (const [what, runs] of Object.entries(seen)) {
        // The two rare endings (about 1 run in 100 each) are required under a fixed seed (CI's
        // FUZZ_SEED), where the count is the same every time; a fresh seed may draw none of them
        // (seen: 0 of 1,000 once), and a newcomer's `npm test` must not fail on that luck.
        const rare = what === "promptTooLong" || what === "maxOutputTokens";
        if (rare && runs === 0 && !FIXED_SEED) {
          console.warn(`property suite: no run ended with ${what} under seed ${SEED} (required under a fixed FUZZ_SEED)`);
          continue;
        }
        expect(runs, `runs with ${what}`).toBeGreaterThan(rare ? 0 : RUNS / 250);
      }
    }
  }, 30_000 + RUNS * 25);

  it("R62/R61: the rebuilt-transcript check rejects a replacement or discard the final context does not show", () => {
    const u = (content: string) => ({ role: "user", content, timestamp: 1 }) as never;
    const a = { role: "assistant", content: [], stopReason: "length" } as never;
    const events = [
      { type: "message_end", message: u("hi") },
      { type: "message_end", message: a },
      { type: "message_discarded", message: a, reason: "output_limit_escalated" },
      { type: "transcript_replaced", messages: [u("compacted 0")], reason: "overflow" },
      { type: "message_end", message: u("next") },
      { type: "agent_end", messages: [u("next")] },
    ] as AnyAgentEvent[];
    expect(transcriptProblems(events, [], [u("compacted 0"), u("next")])).toEqual([]);
    expect(transcriptProblems(events, [], [u("hi"), u("next")])).toEqual(["the rebuilt transcript (2 messages) differs from the run's final context (2)"]);
    const wrongEnd = [...events.slice(0, -1), { type: "agent_end", messages: [u("hi"), u("next")] }] as AnyAgentEvent[];
    expect(transcriptProblems(wrongEnd, [])).toEqual(["the rebuilt transcript is not the last replacement (or the start) followed by agent_end.messages"]);
  });

  it("the invariant checker rejects a malformed sequence", () => {
    const assistant = { role: "assistant", content: [{ type: "toolCall", id: "a", name: "t", arguments: {} }], stopReason: "toolUse" } as never;
    const problems = eventProblems([
      { type: "agent_start" },
      { type: "turn_start" },
      { type: "message_start", message: assistant },
      { type: "message_end", message: assistant },
      { type: "turn_end", message: assistant, toolResults: [] },
      { type: "agent_end", messages: [] },
      { type: "turn_start" },
    ]);
    expect(problems).toEqual([
      '#4 turn_end: tool starts [] are not the calls ["a"] in source order',
      '#4 turn_end: tool ends [] do not match the calls ["a"]',
      '#4 turn_end: result messages [] are not the calls ["a"] in source order',
      "#5 agent_end: agent_end.messages differ from the ended messages",
      "#6 turn_start: event after agent_end",
      "the last event is not agent_end",
      "a turn is still open at the end",
    ]);
  });
});
