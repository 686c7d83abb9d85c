/** What a tool's `context.runSubAgent` starts (SPEC R14): an embedded run, observed through its event stream. */
import { subAgentLauncher } from "./run-logic.js";

/** The launcher of a top-level run (`agentLoop`, an Agent's run): its sub-agents are at depth 1. */
export const subAgents = subAgentLauncher(1);
