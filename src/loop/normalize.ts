/** Moved to `src/protocol/normalize.ts` (the machines' dependency-free layer); this path stays for its importers. */
export * from "../protocol/normalize.js";
