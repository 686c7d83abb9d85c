/** `--trace FILE`: the trace recorder's lines, written synchronously so an exit never loses one. */
import { closeSync, openSync, writeSync } from "node:fs";
import { createTraceRecorder, type TraceRecorder } from "../../trace/index.js";
import type { Model } from "../../types.js";

export interface TraceFile {
  recorder: TraceRecorder;
  close(): void;
}

/** Opens (truncates) `file`; throws with a readable message when it cannot. */
export function openTraceFile(file: string, header: { model: Model; cwd: string; secrets: string[] }): TraceFile {
  let fd: number;
  try {
    fd = openSync(file, "w");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === "ENOENT" ? "its directory does not exist" : code === "EACCES" ? "permission denied" : (error as Error).message;
    throw new Error(`cannot write the trace to ${file}: ${reason}`);
  }
  let open = true;
  const recorder = createTraceRecorder({
    write: (line) => {
      if (open) writeSync(fd, line);
    },
    model: { id: header.model.id, provider: header.model.provider },
    cwd: header.cwd,
    secrets: header.secrets,
  });
  return {
    recorder,
    close() {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}
