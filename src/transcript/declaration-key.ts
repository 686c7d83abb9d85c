/** Moved to `src/protocol/transcript/declaration-key.ts`; this path stays for its importers. */
export * from "../protocol/transcript/declaration-key.js";
