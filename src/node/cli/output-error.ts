/**
 * What the CLI does when its output cannot be written. A closed pipe (`… | head`) is the reader
 * having had enough: a quiet exit 0. Any other write error (a full disk, `>/dev/full`'s ENOSPC, an
 * I/O error on a terminal that went away) ends the program with one line on stderr and
 * `OUTPUT_ERROR_EXIT`, never a stack trace.
 */

/** sysexits' EX_IOERR: the output could not be written (docs/reference/cli.md, exit codes). */
export const OUTPUT_ERROR_EXIT = 74;

export function onOutputError(error: NodeJS.ErrnoException, stderr: { write(text: string): unknown }, exit: (code: number) => void): void {
  if (error.code === "EPIPE") {
    exit(0);
    return;
  }
  try {
    stderr.write(`error: cannot write the output: ${error.message}\n`);
  } catch {
    // stderr is gone too: the exit code still says it.
  }
  exit(OUTPUT_ERROR_EXIT);
}
