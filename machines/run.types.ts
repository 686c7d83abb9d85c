/** The run machine's data lives in `machines/run/types.ts` (this path stays for the runtime's imports). */
export * from "./run/types.js";
