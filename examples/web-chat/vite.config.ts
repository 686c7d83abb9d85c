import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const root = dirname(fileURLToPath(import.meta.url));

// No alias: "xstate-agent-loop" resolves through the package's own "exports" (a package may import
// itself by name), so the page bundles the built package in dist/, as an app that installed it would.
export default defineConfig({
  root,
  base: "./",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: true,
    // Two pages: the chat, and the follower of a session that runs on Restate.
    rollupOptions: { input: { main: join(root, "index.html"), follow: join(root, "follow.html") } },
  },
  server: { host: "127.0.0.1" },
});
