/** Moved to `src/protocol/abort-grace.ts` (the machines' dependency-free layer); this path stays for its importers. */
export * from "../protocol/abort-grace.js";
