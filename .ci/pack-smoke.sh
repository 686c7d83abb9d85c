#!/usr/bin/env bash
# Installs the packed tarball into an empty project (with the peer dependencies an app brings),
# imports the root and every subpath, and runs a scripted agent through the published entry.
set -euo pipefail
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tarball=$(npm pack --silent --pack-destination "$work" | tail -n 1)
cd "$work"
npm init -y >/dev/null
# @restatedev/restate-sdk and @opentelemetry/api: the optional peers an app adds to use the ./restate and ./otel subpaths.
npm install --no-audit --no-fund --silent "./$tarball" xstate@5.33.3 rxjs@7.8.2 zod@4.6.7 @restatedev/restate-sdk@1.12.0 @opentelemetry/api@1.9.1 >/dev/null
cat > smoke.mjs <<'JS'
import { agentLoop, scriptedStreamFn, scriptedModel, text, toolCall, defineTool } from "xstate-agent-loop";
import * as anthropic from "xstate-agent-loop/anthropic";
import * as inspect from "xstate-agent-loop/inspect";
import * as node from "xstate-agent-loop/node";
import * as restate from "xstate-agent-loop/restate";
import * as otel from "xstate-agent-loop/otel";
import { z } from "zod";

for (const [name, mod] of Object.entries({ anthropic, inspect, node, restate, otel })) {
  if (Object.keys(mod).length === 0) throw new Error(`subpath ${name} exports nothing`);
}
const echo = defineTool({
  name: "echo",
  description: "Echo the text",
  parameters: z.object({ text: z.string() }),
  execute: async (_id, { text: value }) => ({ content: [{ type: "text", text: value }], details: {} }),
});
const stream = agentLoop(
  [{ role: "user", content: "say hi", timestamp: Date.now() }],
  { messages: [], tools: [echo] },
  { model: scriptedModel, convertToLlm: (m) => m },
  undefined,
  scriptedStreamFn([{ content: [toolCall("echo", { text: "hi" })] }, { content: [text("done")] }]),
);
const types = [];
for await (const event of stream) types.push(event.type);
const messages = await stream.result();
if (types[0] !== "agent_start" || types.at(-1) !== "agent_end") throw new Error("bad event sequence: " + types.join(","));
if (messages.at(-1).content[0].text !== "done") throw new Error("unexpected final message");
console.log(`pack smoke: ok (${types.length} events, ${messages.length} messages, subpaths: anthropic, inspect, node, restate, otel)`);
JS
node smoke.mjs
