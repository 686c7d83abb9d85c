/** The run machine's pure helpers live in `machines/run/helpers.ts` (this path stays for the runtime's imports). */
export * from "./run/helpers.js";
