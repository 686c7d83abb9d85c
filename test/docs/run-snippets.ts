/**
 * Runs the docs' complete programs one after another in this one process (tsx starts once), each
 * imported as a module (its top-level await included), and prints one JSON line: each file's
 * outcome. Usage: tsx --tsconfig <snippets tsconfig> run-snippets.ts <file>...
 */
import { pathToFileURL } from "node:url";

const results: Record<string, string | null> = {};
let current: string | undefined;
// A rejection nobody handles belongs to the block that is running.
process.on("unhandledRejection", (reason) => {
  if (current) results[current] ??= `unhandled rejection: ${String(reason)}`;
});
for (const file of process.argv.slice(2)) {
  current = file;
  try {
    await import(pathToFileURL(file).href);
    results[file] ??= null;
  } catch (error) {
    results[file] = error instanceof Error ? (error.stack ?? error.message) : String(error);
  }
}
current = undefined;
process.stdout.write(`\n@@results ${JSON.stringify(results)}\n`);
// A block that leaves a timer or socket open must not keep the suite waiting.
process.exit(0);
