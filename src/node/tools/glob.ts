/**
 * Globs: picomatch parses them (`*`, `**`, `?`, `[abc]`, `{a,b}`, POSIX classes), RE2 runs them.
 * picomatch's own regular expressions backtrack: ten `**∕l*` segments against a 30-level path take
 * seconds in V8. Its output differs from RE2 syntax only in lookaheads that keep `.`/`..` segments
 * and empty names from matching; the tools only ever match normalized relative paths, which have
 * neither, so those lookaheads are dropped (or, for "a segment is not empty", rewritten) and the
 * rest is compiled by RE2 (linear time). test/node-tools/glob.test.ts checks the result against
 * picomatch itself. A glob that still needs a lookahead (extglob negation `!(…)`) gets a clear error.
 *
 * A pattern without `/` matches a file's base name (as ripgrep's `-g` does); one with `/` matches
 * the workspace-relative path. Dotfiles match like any other name.
 */
import picomatch from "picomatch";
import { RE2JS } from "re2js";
import { ToolInputError } from "./workspace.js";

/** Longer globs are refused (picomatch's own limit is 64 KB). */
export const MAX_GLOB_LENGTH = 1000;

const chars = picomatch.constants.globChars(false);
/** picomatch's `.`/`..`-segment guards, longest first so none is cut in half. */
const DOT_GUARDS = [chars.NO_DOTS, chars.NO_DOTS_SLASH, chars.NO_DOT_SLASH, chars.NO_DOT].sort((a, b) => b.length - a.length);

/** The glob as an RE2 pattern source (anchored). Throws `ToolInputError` for globs RE2 cannot run. */
export function globToRe2Source(glob: string): string {
  if (glob.length > MAX_GLOB_LENGTH) throw new ToolInputError(`The glob is too long (${glob.length} characters; at most ${MAX_GLOB_LENGTH}).`);
  let source: string;
  try {
    source = picomatch.makeRe(glob, { dot: true }).source;
  } catch (error) {
    throw new ToolInputError(`Invalid glob ${JSON.stringify(glob)}: ${(error as Error).message}`);
  }
  for (const guard of DOT_GUARDS) source = source.split(guard).join("");
  // `(?=.)` opens a segment: "not at the end". Segments are never empty here, so at a segment's start
  // that holds unless everything before consumed the whole path, which only a globstar's `$` branch
  // can do: that branch is dead when the guard follows it, and the guard is then moot.
  source = source.split(`|$)${chars.ONE_CHAR}`).join(")").split(chars.ONE_CHAR).join("");
  if (/\(\?<?[=!]/.test(source)) {
    throw new ToolInputError(`Unsupported glob ${JSON.stringify(glob)}: negated extglobs like !(…) are not supported; use *, **, ?, [..] and {a,b}.`);
  }
  return source;
}

/** A predicate over workspace-relative paths (forward slashes), linear in the path's length. */
export function globMatcher(glob: string): (relativePath: string) => boolean {
  const source = globToRe2Source(glob);
  let pattern: RE2JS;
  try {
    pattern = RE2JS.compile(source);
  } catch (error) {
    throw new ToolInputError(`Unsupported glob ${JSON.stringify(glob)}: ${(error as Error).message}`);
  }
  const byName = !glob.includes("/");
  return (relativePath) => pattern.matches(byName ? relativePath.slice(relativePath.lastIndexOf("/") + 1) : relativePath);
}
