/** What a tool's `context.runSubAgent` starts (SPEC R14): an embedded run, observed through its event stream. */
import type { SubAgentLauncher } from "../actors/run-runtime.js";
import { agentEvents, createAgentRunLogic } from "./run-logic.js";

export const subAgents: SubAgentLauncher = { logic: createAgentRunLogic, events: agentEvents };
