/**
 * System programs some tests drive (Chromium, tmux), found on PATH. On a developer machine without
 * one, its tests skip with a one-line notice naming the Debian package; in CI (`CI` set) a missing
 * program fails the suite, so a green run always means they ran.
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";

/** The first executable file called `name` on `path` (default: `$PATH`), or undefined. */
export function findOnPath(name: string, path = process.env.PATH ?? ""): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** `CI=1`, `CI=true` (any value but empty, `0` or `false`). */
export function inCI(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== "" && value !== "0" && value !== "false";
}

export interface SystemBinary {
  /** The program's name on PATH. */
  name: string;
  /** The Debian package that installs it. */
  debianPackage: string;
  /** What the skipped tests cover, for the notice. */
  purpose: string;
}

/** The notice printed when tests skip, and the error thrown in CI. */
export function missingMessage(binary: SystemBinary, ci: boolean): string {
  const install = `apt-get install ${binary.debianPackage}`;
  return ci
    ? `${binary.name} not found on PATH; CI requires it for ${binary.purpose} (${install})`
    : `skipping ${binary.purpose}: ${binary.name} not found on PATH (Debian package ${binary.debianPackage}: ${install})`;
}

/**
 * The program's path; undefined (after a one-line notice) when it is missing outside CI.
 * Throws when it is missing in CI.
 */
export function requireSystemBinary(binary: SystemBinary, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const found = findOnPath(binary.name, env.PATH ?? "");
  if (found) return found;
  const ci = inCI(env);
  if (ci) throw new Error(missingMessage(binary, true));
  console.warn(missingMessage(binary, false));
  return undefined;
}
