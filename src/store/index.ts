/** The store contract, its typed errors and the in-memory store (Node-free: the root entry re-exports this). */
export type {
  Json,
  StoredRecord,
  StoredSnapshot,
  SessionInfo,
  SizeReport,
  OpenSessionOptions,
  RunStore,
  SessionReader,
  SessionWriter,
} from "./run-store.js";
export {
  SessionLockedError,
  StoreLockError,
  StorePathError,
  UnknownSessionError,
  StoreCorruptError,
  StoreSchemaError,
  StoreInputError,
  StoreClosedError,
  StoreEngineUnavailableError,
} from "./errors.js";
export { createMemoryStore, type MemoryStoreOptions } from "./memory-store.js";
