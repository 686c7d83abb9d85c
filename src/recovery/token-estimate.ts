/** Moved to `src/protocol/token-estimate.ts` (the machines' dependency-free layer); this path stays for its importers. */
export * from "../protocol/token-estimate.js";
