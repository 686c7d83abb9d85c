import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const root = dirname(fileURLToPath(import.meta.url));

// The page is the client only: `useChat` of @ai-sdk/react against the route of
// xstate-agent-loop/ui-stream, which runs in the server (test/web/react-chat.test.ts serves it).
export default defineConfig({
  root,
  base: "./",
  build: { outDir: "dist", emptyOutDir: true, target: "es2022", sourcemap: true },
  server: { host: "127.0.0.1" },
});
