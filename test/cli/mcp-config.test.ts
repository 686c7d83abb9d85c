/**
 * The terminal agent's MCP configuration: Claude Code's `mcpServers` format (stdio and http,
 * `${VAR}` expansion), typed errors for a malformed file, and the once-per-server question for
 * project servers (remembered; asked again when the command changes; refused without a terminal).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/node/cli/app.js";
import { gateProjectServers, MCP_APPROVALS_FILE } from "../../src/node/cli/mcp-approvals.js";
import { McpConfigError, parseMcpServers, readMcpServers } from "../../src/node/cli/mcp-config.js";
import { fakeIO, makeRepo } from "./fixture.js";

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "xal-mcp-cli-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("mcpServers (Claude Code's format)", () => {
  it("stdio and http servers, with ${VAR} and ${VAR:-default} from the environment", () => {
    const text = JSON.stringify({
      mcpServers: {
        files: { command: "npx", args: ["-y", "server-files", "${HOME}/work"], env: { TOKEN: "${MY_TOKEN}" } },
        api: { type: "http", url: "${API_URL:-https://example.com/mcp}", headers: { Authorization: "Bearer ${MY_TOKEN}" }, trustAnnotations: true },
      },
    });
    expect(parseMcpServers(text, "/p/.mcp.json", "project", { HOME: "/home/me", MY_TOKEN: "t0k3n" })).toEqual([
      {
        name: "files",
        source: "project",
        file: "/p/.mcp.json",
        config: { command: "npx", args: ["-y", "server-files", "/home/me/work"], env: { TOKEN: "t0k3n" } },
        summary: "npx -y server-files /home/me/work",
      },
      {
        name: "api",
        source: "project",
        file: "/p/.mcp.json",
        config: { url: "https://example.com/mcp", headers: { Authorization: "Bearer t0k3n" }, trustAnnotations: true },
        summary: "https://example.com/mcp",
      },
    ]);
  });

  it.each([
    ["not json", "{", /is not JSON/],
    ["no mcpServers", "{}", /needs an object "mcpServers"/],
    ["no command", JSON.stringify({ mcpServers: { a: { args: [] } } }), /mcpServers\.a\.command: a stdio server needs a command/],
    ["bad args", JSON.stringify({ mcpServers: { a: { command: "x", args: "y" } } }), /mcpServers\.a\.args: must be an array of strings/],
    ["sse", JSON.stringify({ mcpServers: { a: { type: "sse", url: "http://x" } } }), /"sse" is not supported/],
    ["unset variable", JSON.stringify({ mcpServers: { a: { command: "${NOPE}" } } }), /NOPE is not set/],
    ["bad name", JSON.stringify({ mcpServers: { "a b": { command: "x" } } }), /a server name is/],
  ])("a malformed file is a McpConfigError naming what is wrong: %s", (_case, text, message) => {
    expect(() => parseMcpServers(text, "f.json", "flag", {})).toThrow(McpConfigError);
    expect(() => parseMcpServers(text, "f.json", "flag", {})).toThrow(message);
  });

  it("--mcp-config wins over .mcp.json for a name both have", () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, ".mcp.json"), JSON.stringify({ mcpServers: { a: { command: "project" }, b: { command: "b" } } }));
    writeFileSync(path.join(dir, "mine.json"), JSON.stringify({ mcpServers: { a: { command: "mine" } } }));
    expect(readMcpServers(dir, "mine.json", {}, dir).map((server) => `${server.name}:${server.source}:${server.summary}`)).toEqual(["a:flag:mine", "b:project:b"]);
  });

  it("the CLI refuses a malformed .mcp.json before anything runs (exit 2)", async () => {
    const repo = makeRepo({ ".mcp.json": "{ nope" });
    try {
      const { io, stderr } = fakeIO(repo.root);
      expect(await runCli(["--offline", "--no-save", "hi"], io)).toBe(2);
      expect(stderr()).toMatch(/^error: .*\.mcp\.json is not JSON/);
    } finally {
      repo.cleanup();
    }
  });
});

describe("project servers are asked about once", () => {
  const server = (command: string, source: "project" | "flag" = "project") => ({ name: "s", source, file: "/p/.mcp.json", config: { command, env: { KEY: "secret-value" } }, summary: command });

  it("asked, remembered (without env values), not asked again; asked again when the command changes", async () => {
    const stateDir = tempDir();
    const questions: string[] = [];
    const ask = async (question: string) => (questions.push(question), "y");
    expect((await gateProjectServers([server("run-me")], { stateDir, ask, yes: false })).allowed.map((s) => s.name)).toEqual(["s"]);
    expect(questions).toEqual(['? start MCP server "s" from .mcp.json (run-me)? It was not started here before. [y/N] ']);
    expect(readFileSync(path.join(stateDir, MCP_APPROVALS_FILE), "utf8")).not.toContain("secret-value");
    expect((await gateProjectServers([server("run-me")], { stateDir, ask, yes: false })).allowed).toHaveLength(1);
    expect(questions).toHaveLength(1);
    const changed = await gateProjectServers([server("run-something-else")], { stateDir, ask: async () => "n", yes: false });
    expect(changed).toEqual({ allowed: [], notices: [`MCP server "s" not started (refused; remembered in ${path.join(stateDir, MCP_APPROVALS_FILE)})`] });
  });

  it("without a terminal an unseen project server is not started; --yes starts it; --mcp-config servers never ask", async () => {
    const stateDir = tempDir();
    expect(await gateProjectServers([server("x")], { stateDir, yes: false })).toEqual({
      allowed: [],
      notices: ['MCP server "s" from .mcp.json not started: never approved (run on a terminal once to be asked, or use --yes)'],
    });
    expect((await gateProjectServers([server("x")], { stateDir, yes: true })).allowed).toHaveLength(1);
    expect((await gateProjectServers([server("x", "flag")], { stateDir, yes: false })).allowed).toHaveLength(1);
  });
});
