/** docs/reference/cli.md shows the CLI's usage text as `--help` prints it; this keeps the two equal. */
import { readFileSync } from "node:fs";
import path from "node:path";
import MarkdownIt from "markdown-it";
import { describe, expect, it } from "vitest";
import { USAGE } from "../../src/node/cli/args.js";
import { REPO } from "./snippets.js";

describe("docs/reference/cli.md", () => {
  it("its Usage block is the CLI's usage text", () => {
    const page = readFileSync(path.join(REPO, "docs/reference/cli.md"), "utf8");
    const blocks = new MarkdownIt().parse(page, {}).filter((token) => token.type === "fence" && token.info.trim() === "text");
    expect(blocks[0]?.content.trimEnd()).toBe(USAGE.trimEnd());
  });
});
