/**
 * The progress convention of the workspace tools: a `tool_execution_update`'s `partialResult` has
 * a one-line text and `details.progress` (`done` of `total` when known), which UIs show as a
 * progress bar, or a spinner with the text.
 */
import type { AgentToolUpdateCallback } from "../../types.js";

export interface ToolProgress {
  done: number;
  /** Absent when the amount of work is not known. */
  total?: number;
  /** What is being counted ("files", "lines"). */
  unit: string;
}

export interface ProgressDetails {
  progress: ToolProgress;
}

/** Sends a progress update through a tool's `onUpdate` (whose type is that of the final details). */
export function reportProgress(onUpdate: AgentToolUpdateCallback<any> | undefined, text: string, progress: ToolProgress): void {
  onUpdate?.({ content: [{ type: "text", text }], details: { progress } satisfies ProgressDetails });
}

/** The progress of a partial result, if it follows the convention. */
export function progressOf(partialResult: unknown): ToolProgress | undefined {
  const progress = (partialResult as { details?: { progress?: ToolProgress } } | undefined)?.details?.progress;
  return progress && typeof progress.done === "number" ? progress : undefined;
}
