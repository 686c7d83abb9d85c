/** A fresh process restores a persisted run (SPEC R13): reads {scenario, snapshot, world} on stdin, prints {output, events, world}. */
import { createActor, toPromise } from "xstate";
import { agentEvents, createAgentRunLogic, type AnyAgentEvent } from "../../src/index.js";
import { scenarioInput, scenarioOptions, type World } from "./scenario.js";
import { scenarioBOptions } from "./scenario-b.js";
import { scenarioCOptions } from "./scenario-c.js";

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const { scenario, snapshot, world } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { scenario: "a" | "b" | "c"; snapshot: unknown; world: World };
const options = scenario === "c" ? scenarioCOptions(world) : scenario === "b" ? scenarioBOptions(world) : scenarioOptions(world);
const actor = createActor(createAgentRunLogic(options), { snapshot: snapshot as never, input: scenarioInput() });
const events: AnyAgentEvent[] = [];
agentEvents(actor).subscribe((event) => events.push(event));
actor.start();
const output = await toPromise(actor);
process.stdout.write(JSON.stringify({ output, events, world }));
