/**
 * The layer the machines stand on: the data model (plain types) and the pure functions the
 * statecharts call (tool-result builders, transcript normalization, usage, token estimates,
 * abort-grace accounting, tool declarations in the transcript). It imports nothing outside
 * `src/protocol/` (a dependency-cruiser rule keeps it so): no I/O, no runtime, no XState.
 */
export type * from "./messages.js";
export type * from "./events.js";
export type * from "./tools.js";
export type * from "./config.js";
export type * from "./execution.js";
export type * from "./identity.js";
export * from "./tool-results.js";
export * from "./normalize.js";
export * from "./usage.js";
export * from "./token-estimate.js";
export * from "./abort-grace.js";
export * from "./transcript/index.js";
