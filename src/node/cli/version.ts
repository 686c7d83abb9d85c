import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The package version, from the nearest package.json above this module (src/ or dist/src/). */
export function readVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth++) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "xstate-agent-loop") return `${pkg.name} ${pkg.version}`;
    } catch {
      // keep looking
    }
    dir = path.dirname(dir);
  }
  return "xstate-agent-loop";
}
