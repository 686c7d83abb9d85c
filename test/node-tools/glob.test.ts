/**
 * Issue 15 item 5: globs are parsed by picomatch and run by RE2. The RE2 matcher must agree with
 * picomatch itself on every normalized workspace path (no `.`/`..` segments, no empty names).
 */
import fc from "fast-check";
import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { globMatcher, globToRe2Source, MAX_GLOB_LENGTH } from "../../src/node/index.js";

const segmentToken = fc.constantFrom("a", "b", ".", "*", "?", "[ab]", "[!a]", "{a,b}", "{a,.b}", "a*", "*.b", "+(a|b)", "@(a)", "?(a)", "*(b)", "@(a)?", "{a,}", "{,b}", "!(a)", "a**");
const globSegment = fc.oneof(fc.constant("**"), fc.array(segmentToken, { minLength: 1, maxLength: 3 }).map((tokens) => tokens.join("")));
const glob = fc.array(globSegment, { minLength: 1, maxLength: 4 }).map((segments) => segments.join("/"));
const name = fc.stringMatching(/^[ab.]{1,3}$/).filter((segment) => segment !== "." && segment !== "..");
const workspacePath = fc.array(name, { minLength: 1, maxLength: 4 }).map((segments) => segments.join("/"));

describe("issue 15 item 5: globs (picomatch syntax, RE2 engine)", () => {
  it("item 5: the RE2 matcher agrees with picomatch on normalized paths", () => {
    fc.assert(
      fc.property(glob, fc.array(workspacePath, { minLength: 1, maxLength: 8 }), (pattern, paths) => {
        let ours: (path: string) => boolean;
        try {
          ours = globMatcher(pattern);
        } catch (error) {
          // Only extglobs may be refused, never plain *, **, ?, [..], {a,b}.
          expect(pattern, String(error)).toMatch(/!\(/);
          return;
        }
        const reference = picomatch(pattern, { dot: true });
        const byName = !pattern.includes("/");
        for (const candidate of paths) {
          const subject = byName ? candidate.slice(candidate.lastIndexOf("/") + 1) : candidate;
          expect(ours(candidate), `${pattern} vs ${candidate}`).toBe(reference(subject));
        }
      }),
      { numRuns: Number(process.env.GLOB_RUNS ?? 2000), seed: process.env.GLOB_RUNS ? undefined : 15 },
    );
  });

  it.each([
    ["*.ts", "src/a.ts", true],
    ["*.ts", "src/a.tsx", false],
    ["src/**/*.ts", "src/deep/c.test.ts", true],
    ["src/**/*.ts", "src/a.ts", true],
    ["src/*.ts", "src/deep/c.test.ts", false],
    ["*.{md,json}", "package.json", true],
    ["file?.txt", "file1.txt", true],
    ["*", ".env", true],
    ["[[:digit:]]*.md", "docs/1-intro.md", true],
  ])("item 5: %s matches %s: %s", (pattern, file, expected) => {
    expect(globMatcher(pattern)(file)).toBe(expected);
  });

  it("item 5: an over-long glob and a negated extglob are refused with a clear error", () => {
    expect(() => globMatcher("a".repeat(MAX_GLOB_LENGTH + 1))).toThrow(`The glob is too long (${MAX_GLOB_LENGTH + 1} characters; at most ${MAX_GLOB_LENGTH}).`);
    expect(() => globToRe2Source("!(a)")).toThrow(/negated extglobs/);
  });
});
