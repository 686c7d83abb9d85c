/**
 * The data model of the agent loop (SPEC "Data model"), one module per domain in `src/protocol/`:
 * messages, models and the stream function; events; tools; hooks and config. This file keeps the
 * import path every module and app used before the split.
 */
export type * from "./protocol/messages.js";
export type * from "./protocol/events.js";
export type * from "./protocol/tools.js";
export type * from "./protocol/config.js";
export type { ClientIdentity, ClientAttribution, UserAgentMode } from "./protocol/identity.js";
