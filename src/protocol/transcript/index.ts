/** Transcript replay and tool declaration (R30, R50, R54). */
export { toolDeclKey, keyedToolDecl, type KeyedToolDecl } from "./declaration-key.js";
export { isSystemMessage, hasToolFields } from "./system-message-guard.js";
export { systemContentText } from "./content-text.js";
export {
  createSystemReplay,
  replaySystemMessage,
  replayedContent,
  renderSystemPrompt,
  type SystemReplay,
} from "./system-replay.js";
export { replayTranscript, currentSystemMessage, type TranscriptReplay } from "./replay.js";
export {
  createDeclaredToolSet,
  applySystemMessage,
  applySystemMessages,
  type DeclaredToolSet,
} from "./declared-set.js";
export { diffDeclaredTools, type ToolDelta } from "./tool-delta.js";
export { declareToolChanges, type DeclareToolChangesArgs } from "./declare-tools.js";
export { systemMessageFor } from "./system-message-for.js";
