// Run as an unprivileged user by unreadable.test.ts (root ignores file modes): lists and searches
// the workspace given as argv[2] and prints the results, or the error, as JSON.
import { listFilesTool, searchTextTool, readFileTool } from "../../src/node/index.js";

const cwd = process.argv[2];
const outcome = async (promise: Promise<{ details: unknown }>) =>
  promise.then(
    (result) => ({ ok: true, details: result.details }),
    (error: Error) => ({ ok: false, name: error.name, message: error.message }),
  );
const args = { literal: false, path: ".", ignoreCase: false, maxResults: 100 };
console.log(
  JSON.stringify({
    uid: process.getuid?.(),
    list: await outcome(listFilesTool({ cwd }).execute("c", { path: ".", recursive: true, limit: 500 })),
    search: await outcome(searchTextTool({ cwd }).execute("c", { ...args, pattern: "needle" })),
    read: await outcome(readFileTool({ cwd }).execute("c", { path: "locked-file.txt" })),
  }),
);
