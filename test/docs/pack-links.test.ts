/**
 * Issue 34: the package has no public repository URL, so the markdown it ships (README.md,
 * CHANGELOG.md, docs/) may link only to files it ships. Reads `npm pack --dry-run`'s file list and
 * every link and image of every shipped markdown file (markdown-it's tokens: code is not links).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import GithubSlugger from "github-slugger";
import MarkdownIt from "markdown-it";
import { describe, expect, it } from "vitest";
import { REPO } from "./snippets.js";

/** The relative targets of a markdown text's links and images, without their `#fragment`. */
export function relativeTargets(markdown: string): string[] {
  return relativeLinks(markdown).map((link) => link.file).filter((file) => file !== "");
}

/** A markdown text's relative links: the file part (`""` for the page itself) and the `#fragment`, if any. */
export function relativeLinks(markdown: string): { file: string; fragment: string | undefined }[] {
  const targets: string[] = [];
  const visit = (tokens: ReturnType<MarkdownIt["parse"]>) => {
    for (const token of tokens) {
      const target = token.type === "link_open" ? token.attrGet("href") : token.type === "image" ? token.attrGet("src") : null;
      if (target !== null) targets.push(target);
      if (token.children) visit(token.children);
    }
  };
  visit(new MarkdownIt({ html: true }).parse(markdown, {}));
  return targets
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith("//"))
    .map((target) => {
      const [, file = "", fragment] = /^([^#?]*)(?:\?[^#]*)?(?:#(.*))?$/.exec(target)!;
      return { file: decodeURIComponent(file), fragment: fragment === undefined || fragment === "" ? undefined : decodeURIComponent(fragment) };
    });
}

/** The anchors GitHub gives a markdown text's headings. */
export function headingAnchors(markdown: string): Set<string> {
  const slugger = new GithubSlugger();
  const tokens = new MarkdownIt({ html: true }).parse(markdown, {});
  const anchors = new Set<string>();
  tokens.forEach((token, i) => {
    if (token.type === "heading_open") anchors.add(slugger.slug(tokens[i + 1]!.children!.filter((t) => t.type === "text" || t.type === "code_inline").map((t) => t.content).join("")));
  });
  return anchors;
}

const packed = JSON.parse(
  execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: REPO, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }),
) as { files: { path: string }[] }[];
const shipped = new Set(packed[0]!.files.map((file) => file.path));
const markdown = [...shipped].filter((file) => file.endsWith(".md")).sort();

describe("links in the packed markdown", () => {
  it("the package ships the README, the changelog and the docs", () => {
    expect(markdown).toEqual(expect.arrayContaining(["README.md", "CHANGELOG.md", "docs/README.md", "docs/getting-started.md", "docs/api/README.md"]));
  });

  it("every relative link and image of a shipped markdown file is a shipped file", () => {
    const broken: string[] = [];
    for (const file of markdown) {
      for (const target of relativeTargets(readFileSync(path.join(REPO, file), "utf8"))) {
        const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
        const ok = target.endsWith("/") ? [...shipped].some((f) => f.startsWith(resolved)) : shipped.has(resolved);
        if (!ok) broken.push(`${file}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  // The generated API pages (docs/api/) use anchors of their own; the written pages use headings.
  it("every #fragment of a written page's link names a heading of its target", () => {
    const broken: string[] = [];
    for (const file of markdown.filter((f) => !f.startsWith("docs/api/"))) {
      for (const { file: target, fragment } of relativeLinks(readFileSync(path.join(REPO, file), "utf8"))) {
        const resolved = target === "" ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
        if (fragment === undefined || !resolved.endsWith(".md") || resolved.startsWith("docs/api/") || !existsSync(path.join(REPO, resolved))) continue;
        if (!headingAnchors(readFileSync(path.join(REPO, resolved), "utf8")).has(fragment)) broken.push(`${file}: ${target}#${fragment}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("finds a link to a file the package does not ship (the check can fail)", () => {
    const targets = relativeTargets("See [the tests](../test/readme.test.ts#L3), [home](https://x.y), `[not](a-link.md)` and ![diagram](img/a%20b.png).");
    expect(targets).toEqual(["../test/readme.test.ts", "img/a b.png"]);
    expect(shipped.has(path.posix.normalize("test/readme.test.ts"))).toBe(false);
    expect(relativeLinks("[a](#Top) [b](x.md#the-end)")).toEqual([{ file: "", fragment: "Top" }, { file: "x.md", fragment: "the-end" }]);
    expect([...headingAnchors("# Restore and embed (SPEC R13, R14)\n## `Agent`: the wrapper\n## Agent: the wrapper")]).toEqual([
      "restore-and-embed-spec-r13-r14",
      "agent-the-wrapper",
      "agent-the-wrapper-1",
    ]);
  });
});
