/**
 * Durable runs (SPEC R80, R81, R83): journal a run or an Agent into a `RunStore`
 * (`RunOptions.durable`, `AgentOptions.durable`), resume it after a crash, replay it offline,
 * export it as a trace. The record format is in records.ts and docs/guides/durable-sessions.md ("Durable runs").
 */
export type { DurableOptions, QuietPointSnapshot, LiveAt } from "./durable-run.js";
export type { EventDelivery } from "./delivery.js";
export { readSessionEvents, type SequencedDelivery } from "./stored-events.js";
export { resumeAgentLoop, type ResumeOptions, type ResumeResult } from "./resume.js";
export { replayRun, replayEvents, type ReplayedRun, type ReplayOptions } from "./replay.js";
export { exportSessionTrace, type TraceExportOptions } from "./trace-export.js";
export { JournalDivergedError, JournalFormatError } from "./errors.js";
export { JOURNAL_FORMAT, type JournalRecord, type RunRecord, type JobRecord, type OutRecord, type ResponseRecord, type IntentRecord, type InputRecord, type EndRecord, type SerializedError, type SerializedReply, type JobOutput } from "./records.js";
