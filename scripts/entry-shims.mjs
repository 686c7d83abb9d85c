// After tsc: top-level entry files in dist/ for each public entry, so the package's files read
// `dist/index.js`, `dist/anthropic.js`, … while the compiled tree keeps machines/ and src/ apart.
import { mkdirSync, writeFileSync } from "node:fs";

const entries = {
  index: "./src/index.js",
  anthropic: "./src/providers/anthropic/index.js",
  "ai-sdk": "./src/providers/ai-sdk/index.js",
  inspect: "./src/inspect/index.js",
  inspector: "./src/inspector/index.js",
  mcp: "./src/mcp/index.js",
  "mcp-node": "./src/mcp/node.js",
  node: "./src/node/index.js",
  proxy: "./src/proxy/index.js",
  restate: "./src/restate/index.js",
  sqlite: "./src/sqlite.js",
  testing: "./src/testing/index.js",
  otel: "./src/otel/index.js",
  "ui-stream": "./src/ui-stream/index.js",
  react: "./src/react/index.js",
};
mkdirSync("dist", { recursive: true });
for (const [name, target] of Object.entries(entries)) {
  writeFileSync(`dist/${name}.js`, `export * from "${target}";\n`);
  writeFileSync(`dist/${name}.d.ts`, `export * from "${target}";\n`);
}
