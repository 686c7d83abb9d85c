#!/usr/bin/env node
/** The terminal agent: `npm start -- [options] [prompt…]` (the package's `bin`). See `--help`. */
import { runCli } from "./app.js";

// A closed pipe (`… | head`) ends the program quietly.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

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
process.stdout.write("", () => process.exit(code));
