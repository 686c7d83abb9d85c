/**
 * `xstate-agent-loop/mcp` runs in a browser (Streamable HTTP): its browser bundle, the MCP SDK
 * included, imports no Node built-in; the stdio transport (which spawns processes) is only in
 * `./mcp/node`. And the SDK is loaded only by those entries: neither the root entry nor `./node`
 * reaches it.
 */
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ensureLibraryBuilt } from "../../scripts/example-web.js";
import { bundleForBrowser, ROOT } from "../support/browser-bundle.js";

const SDK = "/node_modules/@modelcontextprotocol/sdk/";

describe("./mcp in a browser bundle", () => {
  beforeAll(async () => {
    await ensureLibraryBuilt();
  }, 180_000);

  it("./mcp (dist/mcp.js) imports no Node built-in, directly or through the MCP SDK; stdio is not in it", async () => {
    const bundle = await bundleForBrowser(join(ROOT, "dist/mcp.js"));
    expect(bundle.builtins).toEqual([]);
    expect(bundle.external).toEqual([]);
    expect(bundle.modules.some((id) => id.includes(`${SDK}dist/esm/client/streamableHttp.js`))).toBe(true);
    expect(bundle.modules.filter((id) => id.includes("stdio"))).toEqual([]);
  });

  it("control: ./mcp/node (stdio) reaches Node built-ins", async () => {
    const bundle = await bundleForBrowser(join(ROOT, "dist/mcp-node.js"));
    expect(bundle.builtins.map((found) => found.specifier).some((name) => /^(node:)?(child_process|stream)$/.test(name))).toBe(true);
  });

  it("the MCP SDK is not loaded unless ./mcp is imported: the root entry and ./node do not reach it", async () => {
    for (const entry of ["dist/index.js", "dist/node.js"]) {
      const bundle = await bundleForBrowser(join(ROOT, entry));
      expect(bundle.modules.filter((id) => id.includes("@modelcontextprotocol")), entry).toEqual([]);
    }
  });
});
