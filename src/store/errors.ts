/** The store's typed errors (SPEC R84). Each leaves the store as it was: nothing is written or rewritten. */

/** Another live writer holds the session (R84). */
export class SessionLockedError extends Error {
  override name = "SessionLockedError";
  constructor(
    readonly sessionId: string,
    /** The process that holds the session, when the store knows it. */
    readonly pid?: number,
  ) {
    super(`session ${sessionId} is open in another ${pid !== undefined ? `process (pid ${pid})` : "writer (a live process holds its lock)"}`);
  }
}

/**
 * A session's lock file cannot be used (R84): the store's lock directory (`<store>.locks/`) is not
 * a directory this process can write, or the session's lock file there is not one (a directory, a
 * file of other content). Nothing was written; the store's data is not concerned.
 */
export class StoreLockError extends Error {
  override name = "StoreLockError";
  constructor(
    readonly path: string,
    readonly sessionId: string,
    readonly lockFile: string,
    detail: string,
  ) {
    super(`session ${sessionId} of the store at ${path} cannot be locked: ${lockFile} ${detail}; nothing was written`);
  }
}

/**
 * The store's path cannot hold a store (R84): it is a directory, a directory on the way is a file,
 * it cannot be created or written (permissions, a read-only file system), or SQLite's files beside
 * it (`-wal`, `-shm`) are not files. Nothing was written; a store already there is left as it was.
 */
export class StorePathError extends Error {
  override name = "StorePathError";
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(`the session store at ${path} cannot be opened: ${detail}; nothing was written`);
  }
}

/** A file-system or engine error in one line, its code first when the message lacks it ("EISDIR: illegal operation …"), for the errors above. */
export function failureText(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
  return typeof code === "string" && !message.includes(code) ? `${code}: ${message}` : message;
}

/** No session with this id. */
export class UnknownSessionError extends Error {
  override name = "UnknownSessionError";
  constructor(readonly sessionId: string) {
    super(`no session with id ${JSON.stringify(sessionId)}`);
  }
}

/**
 * The store's file is not a store, or is truncated or corrupt; it is refused, never rewritten. A
 * damaged record or snapshot (its checksum does not match, R84) names its session and sequence
 * number (a snapshot's `atSeq`); the store's other sessions still read.
 */
export class StoreCorruptError extends Error {
  override name = "StoreCorruptError";
  constructor(
    readonly path: string,
    detail: string,
    readonly at?: { readonly sessionId: string; readonly seq: number; readonly what: "record" | "snapshot" },
  ) {
    super(
      at
        ? `the session store at ${path} is damaged: the ${at.what} of session ${JSON.stringify(at.sessionId)} at sequence number ${at.seq} ${detail}; it is not served, and the store was left untouched`
        : `the session store at ${path} is corrupt or truncated (${detail}); it was left untouched`,
    );
  }
}

/**
 * The store was written by a newer schema than this build knows, or its tables do not match its
 * `user_version` (R84); it is refused, never rewritten.
 */
export class StoreSchemaError extends Error {
  override name = "StoreSchemaError";
  constructor(readonly path: string, readonly found: number, readonly supported: number, detail?: string) {
    super(
      detail
        ? `the session store at ${path} says schema version ${found}, but ${detail}; it was left untouched`
        : `the session store at ${path} has schema version ${found}; this build reads up to ${supported}; it was left untouched`,
    );
  }
}

/** Bad input to the store: a record, snapshot or meta that is not JSON, a malformed session id, a sequence number out of range. Nothing is written. */
export class StoreInputError extends Error {
  override name = "StoreInputError";
}

/** The writer was released, or the store closed: the object is unusable, nothing is written. */
export class StoreClosedError extends Error {
  override name = "StoreClosedError";
}

/** No SQLite engine in this runtime: Node < 22.13 has no `node:sqlite`, and the optional `better-sqlite3` is not installed. */
export class StoreEngineUnavailableError extends Error {
  override name = "StoreEngineUnavailableError";
  constructor(readonly tried: readonly string[], detail: string) {
    super(`no SQLite engine is available (${detail}); on Node 20 install the optional peer: npm install better-sqlite3@12`);
  }
}
