/** Recovery helpers (SPEC R62): the built-in compactor and the token estimate. */
export { summarizingCompactor, type SummarizingCompactorOptions } from "./summarizing-compactor.js";
export { CompactionError, type CompactionFailure } from "./compaction-error.js";
export { estimateTokens, messageChars, type EstimateTokensOptions } from "./token-estimate.js";
export { unpairedToolMessages, type UnpairedToolMessages } from "./tool-pairing.js";
export { isCompactionSummary, SUMMARY_HEADER } from "./summary-message.js";
export { DEFAULT_SUMMARY_INSTRUCTIONS } from "./summary-request.js";
export { streamCompletion } from "./stream-completion.js";
