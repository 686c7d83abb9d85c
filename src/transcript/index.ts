/** Moved to `src/protocol/transcript/` (the machines' dependency-free layer); this path stays for its importers. */
export * from "../protocol/transcript/index.js";
