/**
 * One process of the MCP crash test: an Agent on a durable SQLite session whose tools come from
 * the MCP fixture server (stdio, annotations trusted: `lookup` is replay-safe, `slow` is not).
 * `run` SIGKILLs itself once the server reported progress of `slow` (the call is in flight on the
 * server); `resume` connects afresh, resumes the session, and writes the transcript to `out`.
 *
 *   tsx mcp-crash-child.ts run|resume <dir> <out>
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Agent, scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/index.js";
import type { ScriptedResponse } from "../../src/index.js";
import { connectMcp } from "../../src/mcp/node.js";
import { openSqliteStore } from "../../src/sqlite.js";
import { fixtureServer } from "../mcp/servers.js";
import { fixedClock } from "./crash-scenario.js";

const [mode, dir, out] = process.argv.slice(2) as [string, string, string];
const mcp = await connectMcp({ servers: { fixture: fixtureServer({ trustAnnotations: true, tools: { slow: { needsApproval: false } }, env: { FIXTURE_LOG: join(dir, "server.log") } }) } });
const durable = { store: openSqliteStore(join(dir, "sessions.db")), sessionId: "mcp-crash" };
// The model answers by the number of assistant messages it is shown: any process plays the same session.
const responses: ScriptedResponse[] = [
  { content: [text("Looking up."), toolCall("fixture__lookup", { key: "a" }, "t0-lookup")] },
  { content: [text("Now the slow one."), toolCall("fixture__slow", { steps: 1 }, "t1-slow")] },
  { content: [text("All done.")] },
];
const streamFn = scriptedStreamFn(({ context }) => responses[context.messages.filter((message) => message.role === "assistant").length] ?? { content: [text("extra")] });
const agent = new Agent({ streamFn, initialState: { model: scriptedModel, tools: mcp.tools.slice() }, clock: fixedClock, durable });
agent.subscribe((event) => {
  // The server recorded the call and reported progress: it is in flight. Crash now.
  if (mode === "run" && event.type === "tool_execution_update" && event.toolName === "fixture__slow") process.kill(process.pid, "SIGKILL");
});
if (mode === "run") await agent.prompt({ role: "user", content: "go", timestamp: fixedClock.now() });
else await agent.resume();
writeFileSync(out, JSON.stringify(agent.state.messages));
await mcp.close();
process.exit(0);
