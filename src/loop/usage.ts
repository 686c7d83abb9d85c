/** Moved to `src/protocol/usage.ts` (the machines' dependency-free layer); this path stays for its importers. */
export * from "../protocol/usage.js";
