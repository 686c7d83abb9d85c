import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

// No alias: "xstate-agent-loop" resolves through the package's own "exports" (a package may import
// itself by name), so the page bundles the built package in dist/, as an app that installed it would.
export default defineConfig({
  root: dirname(fileURLToPath(import.meta.url)),
  base: "./",
  build: { outDir: "dist", emptyOutDir: true, target: "es2022", sourcemap: true },
  server: { host: "127.0.0.1" },
});
