/** The trace format v1 (src/trace/FORMAT.md): record types and the recorder. Node-free. */
export { createTraceRecorder, type TraceRecorder, type TraceRecorderOptions } from "./recorder.js";
export { reduceEventForTrace, base64Bytes } from "./reduce.js";
export { toJsonSafe, redact } from "./json.js";
export {
  TRACE_FORMAT,
  TRACE_VERSION,
  type TraceHeader,
  type TraceEventRecord,
  type TraceStateRecord,
  type TraceNoteRecord,
  type TraceRecord,
} from "./format.js";
