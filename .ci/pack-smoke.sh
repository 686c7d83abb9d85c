#!/usr/bin/env bash
# Installs the packed tarball into an empty project (with the peer dependencies an app brings),
# imports the root and every subpath, and runs a scripted agent through the published entry.
#
#   bash .ci/pack-smoke.sh          packs, installs into a temp dir, runs the smoke program, removes the dir
#   bash .ci/pack-smoke.sh DIR      the same in DIR (an empty dir), which it keeps
#   bash .ci/pack-smoke.sh --rerun DIR
#                                   runs DIR's smoke program again with the `node` on PATH: CI's Node 24
#                                   leg tests the same tarball (dist/ is built once) with the same
#                                   installed peers (plain JS, nothing native) without packing and
#                                   installing it again
set -euo pipefail
if [ "${1:-}" = "--rerun" ]; then
  cd "$2"
  test -f smoke.mjs -a -d node_modules/xstate-agent-loop || { echo "pack smoke --rerun: $2 holds no installed smoke project" >&2; exit 1; }
  node smoke.mjs
  exit 0
fi
root=$(pwd)
if [ -n "${1:-}" ]; then
  work=$1
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
tarball=$(npm pack --silent --pack-destination "$work" | tail -n 1)
cd "$work"
npm init -y >/dev/null
# The optional peers an app adds to use the ./restate, ./mcp, ./otel and ./react subpaths.
npm install --no-audit --no-fund --silent "./$tarball" xstate@5.33.3 rxjs@7.8.2 zod@4.6.7 @restatedev/restate-sdk@1.12.0 @modelcontextprotocol/sdk@1.32.2 @opentelemetry/api@1.9.1 react@19.3.1 >/dev/null
cat > smoke.mjs <<'JS'
import { agentLoop, scriptedStreamFn, scriptedModel, text, toolCall, defineTool } from "xstate-agent-loop";
import * as anthropic from "xstate-agent-loop/anthropic";
import * as aiSdk from "xstate-agent-loop/ai-sdk";
import * as inspect from "xstate-agent-loop/inspect";
import * as inspector from "xstate-agent-loop/inspector";
import * as node from "xstate-agent-loop/node";
import * as restate from "xstate-agent-loop/restate";
import * as mcp from "xstate-agent-loop/mcp";
import * as mcpNode from "xstate-agent-loop/mcp/node";
import * as otel from "xstate-agent-loop/otel";
import * as uiStream from "xstate-agent-loop/ui-stream";
import * as react from "xstate-agent-loop/react";
import { z } from "zod";

for (const [name, mod] of Object.entries({ anthropic, "ai-sdk": aiSdk, inspect, inspector, node, restate, mcp, "mcp/node": mcpNode, otel, "ui-stream": uiStream, react })) {
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
// ./ai-sdk loads without any AI SDK package installed (it imports only @ai-sdk/provider's types):
// an in-memory language model of the v4 spec answers through fromAiSdkModel.
const parts = [
  { type: "stream-start", warnings: [] },
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", delta: "hi from v4" },
  { type: "text-end", id: "t" },
  { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: { inputTokens: { total: 3 }, outputTokens: { total: 2 } } },
];
const v4 = {
  specificationVersion: "v4", provider: "smoke.chat", modelId: "smoke-1", supportedUrls: {},
  doGenerate: async () => { throw new Error("unused"); },
  doStream: async () => ({ stream: new ReadableStream({ start(c) { for (const p of parts) c.enqueue(p); c.close(); } }) }),
};
const aiStream = aiSdk.fromAiSdkModel(v4, { facts: { contextWindow: 8000, maxTokens: 1000 } });
const aiRun = agentLoop([{ role: "user", content: "hi", timestamp: Date.now() }], { messages: [], tools: [] }, { model: aiStream.model, convertToLlm: (m) => m }, undefined, aiStream);
for await (const _ of aiRun);
const aiMessages = await aiRun.result();
if (aiMessages.at(-1).content[0].text !== "hi from v4") throw new Error("ai-sdk subpath: unexpected final message");
// ./inspector finds the package's own diagrams and serves its page on the loopback.
const live = await inspector.createLiveInspector({ port: 0 });
const page = await (await fetch(live.url)).text();
await live.close();
if (!page.includes('data-machine="run"')) throw new Error("inspector subpath: the page has no run diagram");
console.log(`pack smoke on Node ${process.versions.node}: ok (${types.length} events, ${messages.length} messages, subpaths: anthropic, ai-sdk, inspect, inspector, node, restate, mcp, mcp/node, otel, ui-stream, react)`);
JS
node smoke.mjs
