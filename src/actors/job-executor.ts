/** The seam for durable execution (SPEC R90); its types live in `src/protocol/execution.ts`. */
export type { JobBody, JobExecutor, JobOutcome, JobParts, WorkerProbe } from "../protocol/execution.js";
