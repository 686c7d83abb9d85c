/**
 * The distributed example (SPEC R90): a Restate server from node_modules on loopback, a worker
 * serving the `agentSession` object, and one session run through the ingress while its events are
 * followed from the object's state (as a client that reconnects would: by the last event id).
 *
 *   npm run example:restate                          the offline demo model, read-only workspace tools
 *   ANTHROPIC_API_KEY=… npm run example:restate      Claude (the key stays in the worker's process)
 *   npm run example:restate -- "what is in src?"     another prompt
 *   npm run example:restate -- --exit                stop once the session ended (default: keep serving until Ctrl-C)
 *
 * It prints where the Restate UI is (the invocation and its journal are there).
 */
import type { SessionEvent, SessionState } from "../src/restate/index.js";
import { listFilesTool, readFileTool, searchTextTool } from "../src/node/tools/index.js";
import { chooseModel } from "../src/node/cli/model.js";
import { defaultConvertToLlm } from "../src/agent/loop-config.js";

// The SDK reads its log level when it loads: its per-invocation INFO lines would bury the session.
process.env.RESTATE_LOGGING ??= "WARN";
const restate = await import("@restatedev/restate-sdk");
const { agentSessionObjects, readSessionJournal, startLocalRestateServer } = await import("../src/restate/index.js");
const { replayRun } = await import("../src/durable/replay.js");

const args = process.argv.slice(2);
const exitWhenDone = args.includes("--exit");
const prompt = args.filter((arg) => !arg.startsWith("--")).join(" ") || "summarize this repository";

const choice = chooseModel({ offline: false }, process.env);
const cwd = process.cwd();
const { session, inbox } = agentSessionObjects({
  streamFn: choice.streamFn,
  // Read-only tools: a write would need an approval, which arrives in a later step.
  tools: [listFilesTool({ cwd }), readFileTool({ cwd }), searchTextTool({ cwd })],
  config: {
    model: choice.model,
    convertToLlm: defaultConvertToLlm,
    toolExecution: "parallel",
    // R70 on Restate: calls start while the response streams, as in the CLI and the web example.
    streamingToolExecution: true,
    systemPrompt: `You are a coding assistant working in ${cwd}. Use the tools to look around; answer briefly.`,
  } as never,
});

const server = await startLocalRestateServer();
const port = await restate.endpoint().bind(session).bind(inbox).listen(0);
await server.registerDeployment(`http://127.0.0.1:${port}`);
console.log(`Restate ${server.ingressUrl} (ingress), UI ${server.adminUrl}/ui/ — worker on 127.0.0.1:${port}, model: ${choice.label}`);

const key = `example-${Date.now().toString(36)}`;
const call = async <T>(handler: string, body: unknown): Promise<T> => {
  const response = await fetch(`${server.ingressUrl}/agentSession/${key}/${handler}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${handler}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
};

console.log(`session ${key}: ${prompt}`);
const reply = call<{ lastEventId: number }>("prompt", { text: prompt });
// The run's last event id, once `prompt` returned: follow the log until it is drawn (a fetch that
// began before the run ended may still come back without its last events).
let finalId: number | undefined;
let failed: unknown;
reply.then((response) => (finalId = response.lastEventId), (error: unknown) => (failed = error ?? new Error("prompt failed")));
let last = 0;
for (;;) {
  const { events } = await call<{ events: SessionEvent[] }>("events", { after: last });
  for (const { id, event } of events) {
    last = id;
    print(event);
  }
  if (failed) throw failed;
  if (finalId !== undefined && last >= finalId) break;
  if (events.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
}
const state = await call<SessionState>("state", null);
console.log(`\nsession ${key}: ${state.messages.length} messages, ${state.lastEventId} events in the object's state. Journal: ${server.adminUrl}/ui/`);

// R83 across workers: the session's own journal, read through the ingress, replays here offline
// (no model, no tools) to the events the follow loop above drew.
const records = await readSessionJournal(server.ingressUrl, key);
const replayed = (await replayRun(records)).flatMap((run) => run.events);
const { events: logged } = await call<{ events: SessionEvent[] }>("events", { after: 0, limit: 100_000 });
const same = replayed.length === logged.length && replayed.every((event, i) => JSON.stringify(event) === JSON.stringify(logged[i].event));
console.log(`replayed offline from ${records.length} journal records: ${replayed.length} events, ${same ? "identical to the session's log" : "DIFFERENT from the session's log"}`);
if (!same) process.exitCode = 1;

if (exitWhenDone) {
  await server.stop();
  process.exit(process.exitCode ?? 0);
}
console.log("Serving; Ctrl-C stops the server and the worker.");
process.once("SIGINT", () => void server.stop().then(() => process.exit(0)));

function print(event: SessionEvent["event"]): void {
  switch (event.type) {
    case "tool_execution_start":
      console.log(`  → ${event.toolName} ${JSON.stringify(event.args)}`);
      break;
    case "tool_execution_end":
      console.log(`  ← ${event.toolName}${event.isError ? " (error)" : ""}`);
      break;
    case "message_end":
      if (event.message.role === "assistant") {
        const text = event.message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
        if (text) console.log(`\n${text}\n`);
      }
      break;
    case "agent_end":
      console.log(`(run ended: ${(event as { reason?: string }).reason ?? "completed"})`);
      break;
  }
}
