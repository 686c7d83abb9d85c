/** The store's typed errors (SPEC R84). Each leaves the store as it was: nothing is written or rewritten. */

/** Another live writer holds the session (R84). */
export class SessionLockedError extends Error {
  override name = "SessionLockedError";
  constructor(readonly sessionId: string, message = `session ${sessionId} is open for writing elsewhere (another live process holds its lock)`) {
    super(message);
  }
}

/** No session with this id. */
export class UnknownSessionError extends Error {
  override name = "UnknownSessionError";
  constructor(readonly sessionId: string) {
    super(`no session with id ${JSON.stringify(sessionId)}`);
  }
}

/** The store's file is not a store, or is truncated or corrupt; it is refused, never rewritten. */
export class StoreCorruptError extends Error {
  override name = "StoreCorruptError";
  constructor(readonly path: string, detail: string) {
    super(`the session store at ${path} is corrupt or truncated (${detail}); it was left untouched`);
  }
}

/** The store was written by a newer schema than this build knows; it is refused, never rewritten. */
export class StoreSchemaError extends Error {
  override name = "StoreSchemaError";
  constructor(readonly path: string, readonly found: number, readonly supported: number) {
    super(`the session store at ${path} has schema version ${found}; this build reads up to ${supported}; it was left untouched`);
  }
}
