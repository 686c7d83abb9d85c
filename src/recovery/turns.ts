/**
 * Turn boundaries of a transcript, for compaction (SPEC R62). A turn starts at a user message and
 * runs up to the next one, so an assistant message and the tool results that follow it always
 * share a turn. A loop-added recovery message (R61 `recovery: "output_limit"`) does not start a
 * turn: it belongs with the truncated answer it resumes.
 */
import type { AgentMessage } from "../types.js";
import { isPairSafeCut } from "./tool-pairing.js";

/** Indices of the messages that start a turn, ascending. */
export function turnStarts(messages: readonly AgentMessage[]): number[] {
  const starts: number[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as { role?: unknown; recovery?: unknown };
    if (message.role === "user" && message.recovery === undefined) starts.push(i);
  }
  return starts;
}

/**
 * Where the verbatim tail begins when the last `keepTurns` turns are kept: the start of the
 * earliest kept turn, moved to an earlier turn start if a call before it were answered after it.
 * Undefined when nothing before the tail could be compacted (too few turns, or only system
 * messages before it).
 */
export function keptTailStart(messages: readonly AgentMessage[], keepTurns: number): number | undefined {
  const starts = turnStarts(messages);
  if (starts.length < keepTurns) return undefined;
  let turn = starts.length - keepTurns;
  let cut = turn < starts.length ? starts[turn] : messages.length;
  while (!isPairSafeCut(messages, cut)) {
    turn--;
    if (turn < 0) return undefined;
    cut = starts[turn];
  }
  for (let i = 0; i < cut; i++) if ((messages[i] as { role?: unknown }).role !== "system") return cut;
  return undefined;
}

/** `messages` cut at every turn start: the part before the first turn (maybe empty), then each turn. */
export function splitTurns(messages: readonly AgentMessage[]): AgentMessage[][] {
  const starts = turnStarts(messages);
  const bounds = [0, ...starts.filter((start) => start > 0), messages.length];
  const segments: AgentMessage[][] = [];
  for (let i = 0; i + 1 < bounds.length; i++) segments.push(messages.slice(bounds[i], bounds[i + 1]));
  return segments.filter((segment) => segment.length > 0);
}
