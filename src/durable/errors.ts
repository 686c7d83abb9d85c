/** The journal's typed errors (SPEC R81, R83). */

/** A replayed or resumed run asked for a job the journal does not hold there: the code or the options changed since it was recorded. */
export class JournalDivergedError extends Error {
  override name = "JournalDivergedError";
  constructor(readonly index: number, detail: string) {
    super(`the run diverged from its journal at record ${index}: ${detail}`);
  }
}

/** The session's records are not a run journal this build reads (no `run` record, or a newer format). */
export class JournalFormatError extends Error {
  override name = "JournalFormatError";
  constructor(detail: string) {
    super(`not a run journal this build can read: ${detail}`);
  }
}
