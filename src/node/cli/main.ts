#!/usr/bin/env node
/** The terminal agent: `npm start -- [options] [prompt…]` (the package's `bin`). See `--help`. */
import { runCli } from "./app.js";
import { onOutputError, OUTPUT_ERROR_EXIT } from "./output-error.js";

// A closed pipe (`… | head`) ends the program quietly; another write error with one line and code 74.
process.stdout.on("error", (error: NodeJS.ErrnoException) => onOutputError(error, process.stderr, (code) => process.exit(code)));
// With stderr unwritable too, there is no one to tell: the code alone says it.
process.stderr.on("error", () => process.exit(OUTPUT_ERROR_EXIT));

const code = await runCli(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
  onSigint: (handler) => {
    process.on("SIGINT", handler);
    return () => process.off("SIGINT", handler);
  },
});
// Let stdout drain, then exit even if a socket or timer is still around.
// An output that failed is reported here too: the error event may come after this callback.
process.stdout.write("", (error) => (error ? onOutputError(error, process.stderr, (failed) => process.exit(failed)) : process.exit(code)));
