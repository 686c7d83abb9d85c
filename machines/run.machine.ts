/** The run machine lives in `machines/run/` (this path stays for the runtime's imports). */
export * from "./run/run.machine.js";
