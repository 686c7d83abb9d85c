import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { validateToolArguments, type AgentTool, type AgentToolResult } from "../../src/index.js";

/** A small workspace: sources with TODOs, a node_modules and a .git that must be skipped. */
export function makeWorkspace(): { root: string; cleanup: () => void } {
  const root = mkdtempSync(path.join(tmpdir(), "xal-tools-"));
  const files: Record<string, string> = {
    "README.md": "# Demo\n\nA demo workspace.\n",
    "package.json": JSON.stringify({ name: "demo", version: "1.0.0" }, null, 2) + "\n",
    "src/a.ts": "export const a = 1;\n// TODO: rename a\nexport const b = 2;\n",
    "src/b.ts": "// todo lower case\nexport function f() {\n  return 42; // TODO(x): answer\n}\n",
    "src/deep/c.test.ts": "test('c', () => {}); // TODO later\n",
    "notes.txt": Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n") + "\n",
    "node_modules/dep/index.js": "// TODO in a dependency\n",
    ".git/HEAD": "ref: refs/heads/main TODO\n",
  };
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), content);
  }
  writeFileSync(path.join(root, "binary.bin"), Buffer.from([0, 1, 2, 84, 79, 68, 79]));
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

export const textOf = (result: AgentToolResult): string =>
  result.content.map((block) => (block.type === "text" ? block.text : "")).join("");

/** Runs a tool as the loop would (the zod schema applies defaults). */
export async function run<T>(tool: AgentTool<any, T>, args: Record<string, unknown>, onUpdate?: (partial: AgentToolResult) => void) {
  const validation = validateToolArguments(tool, { arguments: args });
  if (!validation.ok) throw new Error(validation.message);
  return (await tool.execute("call", validation.args, undefined, onUpdate)) as AgentToolResult<T>;
}
