/**
 * The run machine's types, and the typed action creators its action modules build with (so each
 * module's actions are checked against the machine's context, events, children and emitted events
 * without the machine file around them).
 */
import { assign, emit, enqueueActions, stopChild, type DoneActorEvent, type ErrorActorEvent } from "xstate";
import type { AgentMessage, AnyAgentEvent } from "../../src/protocol/index.js";
import type { RunAbort, RunApprovalEvent, StepReissue, StepReply, StepWorkerLogic, StreamToolCallReady, ForwardedStep } from "../steps.js";
import type { CallApprovalNeeded, CallChecked, toolCallMachine } from "../tool-call.machine.js";
import type { RunContext, ToolCallOutcome } from "./types.js";

export type ToolDoneEvent = DoneActorEvent<ToolCallOutcome, `tool:${number}`>;
export type ToolErrorEvent = ErrorActorEvent<unknown, `tool:${number}`>;
export type RunEvent =
  | ToolDoneEvent
  | ToolErrorEvent
  | StepReply
  | StepReissue
  | RunAbort
  | RunApprovalEvent
  | StreamToolCallReady
  | CallChecked
  | CallApprovalNeeded
  | ForwardedStep;

/** The run's children: its step worker and its tool calls (`tool:<index in batch>`). */
export type RunActors =
  | { src: "steps"; logic: StepWorkerLogic; id: string | undefined }
  | { src: "toolCall"; logic: typeof toolCallMachine; id: string | undefined };

export const toolChildId = (index: number) => `tool:${index}` as const;
export const indexOfChild = (actorId: string) => Number(actorId.slice("tool:".length));

/** `assign` typed for the run machine (`P`: the action's params). */
export const runAssign = <P = undefined>(assignment: Parameters<typeof assign<RunContext, RunEvent, P, RunEvent, RunActors>>[0]) =>
  assign<RunContext, RunEvent, P, RunEvent, RunActors>(assignment);

/** `enqueueActions` typed for the run machine (`P`: the action's params). */
export const runEnqueue = <P = undefined>(
  collect: Parameters<typeof enqueueActions<RunContext, RunEvent, P, RunEvent, RunActors, never, never, never, AnyAgentEvent>>[0],
) => enqueueActions<RunContext, RunEvent, P, RunEvent, RunActors, never, never, never, AnyAgentEvent>(collect);

/** `emit` typed for the run machine (`P`: the action's params). */
export const runEmit = <P = undefined>(event: Parameters<typeof emit<RunContext, RunEvent, P, RunEvent, AnyAgentEvent>>[0]) =>
  emit<RunContext, RunEvent, P, RunEvent, AnyAgentEvent>(event);

/** `stopChild` typed for the run machine (`P`: the action's params). */
export const runStopChild = <P = undefined>(actorRef: Parameters<typeof stopChild<RunContext, RunEvent, P, RunEvent>>[0]) =>
  stopChild<RunContext, RunEvent, P, RunEvent>(actorRef);

/**
 * The one place a message's `message_start`/`message_end` pair is emitted by the machine (R1,
 * R4b, R24, R25, R28, R56, R60–R62). (An assistant response's own events come from its stream job.)
 */
export function announce(enqueue: { emit(event: AnyAgentEvent): void }, messages: readonly AgentMessage[]): void {
  for (const message of messages) {
    enqueue.emit({ type: "message_start", message });
    enqueue.emit({ type: "message_end", message });
  }
}
