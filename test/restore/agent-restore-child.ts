/** A fresh process restores a persisted Agent (SPEC R13): reads {snapshot, world} on stdin, prints its final transcript. */
import { Agent } from "../../src/index.js";
import { agentScenario, type AgentWorld } from "./agent-scenario.js";

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const { snapshot, world } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { snapshot: unknown; world: AgentWorld };
const parts = agentScenario("plain", world, () => agent);
const agent: Agent = Agent.restore(snapshot, parts.options);
await agent.waitForIdle();
process.stdout.write(JSON.stringify(agent.state.messages));
