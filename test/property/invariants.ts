/**
 * The structural invariants every run's event sequence must keep, whatever the scenario. Shared by
 * the property suite (random scenarios) and the model-based suite (one run per graph path).
 * Returns a list of problems (empty = well formed), so a failure names every broken rule at once.
 */
import type { AnyAgentEvent, AgentMessage, AssistantMessage, ToolCall, ToolResultMessage } from "../../src/index.js";

const isAssistant = (message: AgentMessage): message is AssistantMessage => (message as { role?: string }).role === "assistant";
const isToolResult = (message: AgentMessage): message is ToolResultMessage => (message as { role?: string }).role === "toolResult";
const callsOf = (message: AssistantMessage): ToolCall[] => message.content.filter((block): block is ToolCall => block.type === "toolCall");
const failed = (message: AssistantMessage) => message.stopReason === "error" || message.stopReason === "aborted";
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

interface OpenTurn {
  index: number;
  /** Assistant messages ended in this turn. */
  assistants: AssistantMessage[];
  starts: string[];
  ends: string[];
  /** Tool-result messages ended in this turn. */
  results: ToolResultMessage[];
}

/**
 * - agent_start first and agent_end last, exactly once each; nothing after agent_end.
 * - turn_start/turn_end balanced and never nested; message_start/message_end balanced, never
 *   nested, always inside a turn; message_update only inside an open assistant message.
 * - tool events inside a turn and outside a message; per tool call exactly one
 *   tool_execution_start, one tool_execution_end (after its start) and one result message; starts
 *   and result messages in the batch's source order; updates only between start and end.
 * - a failed (error/aborted) response runs no tool and is the run's last request (R6).
 * - agent_end.messages, the resolved value and the ended messages (the transcript delta) are equal (R12),
 *   where `transcript_replaced` starts the delta afresh and `message_discarded` takes its message back
 *   (R62, R61: the messages added since the last replacement).
 * - `streamingTools` (R70–R72): tool events may come inside the open assistant message; a failed
 *   response's started calls end (no result message), and its calls that never started have no
 *   events; every started call starts in source order.
 */
export function eventProblems(events: readonly AnyAgentEvent[], resolved?: readonly AgentMessage[], options: { streamingTools?: boolean } = {}): string[] {
  const streaming = options.streamingTools === true;
  // R70: in streaming mode a call's events may come while its response is still open.
  const openForTools = (open: AgentMessage | null) => open !== null && !(streaming && isAssistant(open));
  const problems: string[] = [];
  const add = (i: number, text: string) => problems.push(`#${i} ${events[i]?.type ?? "?"}: ${text}`);
  let turn: OpenTurn | null = null;
  let message: AgentMessage | null = null;
  const ended: AgentMessage[] = [];
  const started = new Map<string, number>();
  const finished = new Set<string>();
  let failedResponse = -1;
  let agentStarts = 0;
  let agentEnds = 0;

  events.forEach((event, i) => {
    if (agentEnds > 0) add(i, "event after agent_end");
    switch (event.type) {
      case "agent_start":
        agentStarts++;
        if (i !== 0) add(i, "agent_start is not the first event");
        break;
      case "agent_end":
        agentEnds++;
        if (turn) add(i, "agent_end inside an open turn");
        if (!same(event.messages, ended)) add(i, "agent_end.messages differ from the ended messages");
        break;
      case "turn_start":
        if (turn) add(i, "turn_start inside an open turn");
        if (failedResponse >= 0) add(i, `a turn starts after the failed response at #${failedResponse} (R6)`);
        turn = { index: i, assistants: [], starts: [], ends: [], results: [] };
        break;
      case "turn_end":
        if (!turn) add(i, "turn_end without turn_start");
        else {
          if (message) add(i, "turn_end inside an open message");
          (streaming ? checkStreamedTurn : checkTurn)(turn, event, i, add);
        }
        turn = null;
        break;
      case "message_start":
        if (message) add(i, "message_start inside an open message");
        if (!turn) add(i, "message_start outside a turn");
        message = event.message;
        break;
      case "message_update":
        if (!message) add(i, "message_update outside a message");
        else if (!isAssistant(message)) add(i, "message_update of a non-assistant message");
        break;
      case "message_end": {
        if (!message) add(i, "message_end without message_start");
        else if ((message as { role?: string }).role !== (event.message as { role?: string }).role) add(i, "message_end role differs from its start");
        message = null;
        ended.push(event.message);
        if (turn && isAssistant(event.message)) {
          turn.assistants.push(event.message);
          if (failed(event.message) && failedResponse < 0) failedResponse = i;
        }
        if (turn && isToolResult(event.message)) turn.results.push(event.message);
        break;
      }
      case "tool_execution_start":
        if (!turn) add(i, "tool_execution_start outside a turn");
        if (openForTools(message)) add(i, "tool_execution_start inside an open message");
        if (failedResponse >= 0) add(i, `a tool starts after the failed response at #${failedResponse} (R6)`);
        if (started.has(event.toolCallId)) add(i, `second tool_execution_start for ${event.toolCallId}`);
        started.set(event.toolCallId, i);
        turn?.starts.push(event.toolCallId);
        break;
      case "tool_execution_update":
        if (!started.has(event.toolCallId) || finished.has(event.toolCallId)) add(i, `tool_execution_update outside ${event.toolCallId}'s execution`);
        if (openForTools(message)) add(i, "tool_execution_update inside an open message");
        break;
      case "tool_execution_end":
        if (!started.has(event.toolCallId)) add(i, `tool_execution_end before tool_execution_start for ${event.toolCallId}`);
        if (finished.has(event.toolCallId)) add(i, `second tool_execution_end for ${event.toolCallId}`);
        if (openForTools(message)) add(i, "tool_execution_end inside an open message");
        finished.add(event.toolCallId);
        turn?.ends.push(event.toolCallId);
        break;
      case "transcript_replaced":
        if (message) add(i, "transcript_replaced inside an open message");
        ended.length = 0;
        break;
      case "message_discarded":
        if (message) add(i, "message_discarded inside an open message");
        if (!same(ended[ended.length - 1], event.message)) add(i, "message_discarded does not name the last ended message");
        else {
          const discarded = ended.pop();
          if (turn && turn.assistants[turn.assistants.length - 1] === discarded) turn.assistants.pop();
        }
        break;
    }
  });

  if (agentStarts !== 1) problems.push(`agent_start emitted ${agentStarts} times`);
  if (agentEnds !== 1) problems.push(`agent_end emitted ${agentEnds} times`);
  if (events.length > 0 && events[events.length - 1].type !== "agent_end") problems.push("the last event is not agent_end");
  if (turn) problems.push("a turn is still open at the end");
  if (message) problems.push("a message is still open at the end");
  if (resolved && !same(resolved, ended)) problems.push("the resolved messages differ from the ended messages");
  return problems;
}

/** R21–R28 for one turn: every call of its response started, ended and answered once, in source order. */
function checkTurn(turn: OpenTurn, end: Extract<AnyAgentEvent, { type: "turn_end" }>, i: number, add: (i: number, text: string) => void) {
  const calls = turn.assistants.filter((m) => !failed(m)).flatMap(callsOf);
  const ids = calls.map((call) => call.id);
  if (!same(turn.starts, ids)) add(i, `tool starts ${JSON.stringify(turn.starts)} are not the calls ${JSON.stringify(ids)} in source order`);
  if (!same([...turn.ends].sort(), [...ids].sort())) add(i, `tool ends ${JSON.stringify(turn.ends)} do not match the calls ${JSON.stringify(ids)}`);
  const resultIds = turn.results.map((m) => m.toolCallId);
  if (!same(resultIds, ids)) add(i, `result messages ${JSON.stringify(resultIds)} are not the calls ${JSON.stringify(ids)} in source order`);
  // R6, R56: a turn closed by a failed response or a failure message reports no results.
  const expected = isAssistant(end.message) && failed(end.message) ? [] : turn.results;
  if (!same(end.toolResults, expected)) add(i, "turn_end.toolResults differ from the turn's result messages");
  const last = turn.assistants[turn.assistants.length - 1];
  if (last && !same(end.message, last)) add(i, "turn_end.message is not the turn's last assistant message");
}

/** R70–R72 for one turn of streaming mode: calls start in source order; a failed response answers none. */
function checkStreamedTurn(turn: OpenTurn, end: Extract<AnyAgentEvent, { type: "turn_end" }>, i: number, add: (i: number, text: string) => void) {
  const last = turn.assistants[turn.assistants.length - 1];
  const ids = turn.assistants.flatMap(callsOf).map((call) => call.id);
  const positions = turn.starts.map((id) => ids.indexOf(id));
  if (positions.some((p, k) => p < 0 || (k > 0 && p <= positions[k - 1]))) add(i, `R70: tool starts ${JSON.stringify(turn.starts)} are not calls of ${JSON.stringify(ids)} in source order`);
  if (!same([...turn.ends].sort(), [...turn.starts].sort())) add(i, `tool ends ${JSON.stringify(turn.ends)} do not match the starts ${JSON.stringify(turn.starts)}`);
  const failedTurn = isAssistant(end.message) && failed(end.message);
  const resultIds = turn.results.map((m) => m.toolCallId);
  if (failedTurn && resultIds.length > 0) add(i, `R72: result messages ${JSON.stringify(resultIds)} after a failed response`);
  if (!failedTurn && !same(resultIds, ids)) add(i, `R71: result messages ${JSON.stringify(resultIds)} are not the calls ${JSON.stringify(ids)} in source order`);
  if (!failedTurn && !same(turn.starts, ids)) add(i, `tool starts ${JSON.stringify(turn.starts)} are not every call ${JSON.stringify(ids)}`);
  if (!same(end.toolResults, failedTurn ? [] : turn.results)) add(i, "turn_end.toolResults differ from the turn's result messages");
  if (last && !same(end.message, last)) add(i, "turn_end.message is not the turn's last assistant message");
}

/**
 * SPEC "Recovery"'s invariant: the transcript rebuilt from the events (each `message_end` appended,
 * each `transcript_replaced` replacing it, each `message_discarded` taking its message back) equals
 * the run's final context, and that context is the last replacement (else `start`) followed by
 * `agent_end.messages`. `finalContext`: what the run holds at the end (the run actor's
 * `context.messages`), when the caller can observe it.
 */
export function transcriptProblems(events: readonly AnyAgentEvent[], start: readonly AgentMessage[], finalContext?: readonly AgentMessage[]): string[] {
  const problems: string[] = [];
  let transcript = [...start];
  let base: readonly AgentMessage[] = start;
  for (const event of events) {
    if (event.type === "message_end") transcript.push(event.message);
    else if (event.type === "transcript_replaced") transcript = [...(base = event.messages)];
    else if (event.type === "message_discarded") transcript.pop();
  }
  const end = events[events.length - 1];
  if (end?.type !== "agent_end") return problems;
  if (!same(transcript, [...base, ...end.messages])) problems.push("the rebuilt transcript is not the last replacement (or the start) followed by agent_end.messages");
  if (finalContext && !same(transcript, finalContext)) problems.push(`the rebuilt transcript (${transcript.length} messages) differs from the run's final context (${finalContext.length})`);
  return problems;
}
