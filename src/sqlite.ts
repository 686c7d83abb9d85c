/**
 * `xstate-agent-loop/sqlite` (Node only): the durable session store on SQLite (SPEC R80–R84).
 * The engine loads when a store opens, so importing this entry needs neither engine.
 */
export { openSqliteStore, type SqliteStoreOptions, type SqliteRunStore } from "./store/sqlite/sqlite-store.js";
export type { SqliteEngineName } from "./store/sqlite/engine.js";
export { SCHEMA_VERSION } from "./store/sqlite/schema.js";
export * from "./store/index.js";
