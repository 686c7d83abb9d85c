/** Moved to `src/protocol/tool-results.ts` (the machines' dependency-free layer); this path stays for its importers. */
export * from "../protocol/tool-results.js";
