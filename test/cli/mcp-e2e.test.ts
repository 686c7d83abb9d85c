/**
 * The terminal agent with an MCP server, under a real pseudo-terminal (tmux): a `.mcp.json` names
 * the everything server (stdio); the agent asks once before starting it (remembered in its state
 * directory), `/mcp` lists its tools, the offline demo model calls one of them, the call's
 * approval question names the server, and the answer shows the result. A second start does not ask.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireSystemBinary } from "../support/system-binary.js";
import { waitForPane } from "../support/pane.js";
import { MAIN, makeRepo, STATE_HOME, TSX } from "./fixture.js";
import { EVERYTHING_MAIN } from "../mcp/servers.js";
import { sessionStoreDir } from "../../src/node/cli/sessions.js";
import { MCP_APPROVALS_FILE } from "../../src/node/cli/mcp-approvals.js";

const TMUX = requireSystemBinary({ name: "tmux", debianPackage: "tmux", purpose: "the CLI's MCP pseudo-terminal test (test/cli/mcp-e2e.test.ts)" });
const SOCKET = `xal-mcp-e2e-${process.pid}`;
const tmux = (...args: string[]) => execFileSync(TMUX!, ["-L", SOCKET, ...args], { encoding: "utf8" });
const capture = (session: string) => () => tmux("capture-pane", "-p", "-J", "-S", "-", "-t", session);

let repo: { root: string; cleanup: () => void };

function start(session: string): void {
  const command = [
    `env -u NO_COLOR -u ANTHROPIC_API_KEY XDG_STATE_HOME=${JSON.stringify(STATE_HOME)} TERM=xterm-256color`,
    JSON.stringify(process.execPath),
    JSON.stringify(TSX),
    JSON.stringify(MAIN),
    "--offline --no-save",
    '; echo "EXITED $?"; sleep 60',
  ].join(" ");
  tmux("new-session", "-d", "-x", "140", "-y", "45", "-s", session, "-c", repo.root, "-e", "TERM=xterm-256color", command);
}

beforeAll(() => {
  if (!TMUX) return;
  repo = makeRepo();
  writeFileSync(path.join(repo.root, ".mcp.json"), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_MAIN, "stdio"] } } }, null, 2));
});

afterAll(() => {
  if (!TMUX) return;
  try {
    tmux("kill-server");
  } catch {
    // already gone
  }
  repo.cleanup();
});

describe.skipIf(!TMUX)("the terminal agent with an MCP server (.mcp.json)", () => {
  it("asks before starting the project server, lists it with /mcp, and the demo model calls its tool with approval", async () => {
    start("mcp");
    const waitFor = (what: string, test: (screen: string) => boolean) => waitForPane(capture("mcp"), what, test, 20_000);
    await waitFor("the server question", (screen) => screen.includes('? start MCP server "everything" from .mcp.json'));
    tmux("send-keys", "-t", "mcp", "-l", "y");
    tmux("send-keys", "-t", "mcp", "Enter");
    await waitFor("the prompt", (screen) => screen.includes("❯ ask something"));
    expect(capture("mcp")()).toMatch(/MCP: everything \(\d+ tools\) · \/mcp lists them/);

    tmux("send-keys", "-t", "mcp", "-l", "/mcp");
    tmux("send-keys", "-t", "mcp", "Enter");
    const listed = await waitFor("the /mcp listing", (screen) => screen.includes("everything__get-sum"));
    expect(listed).toMatch(/everything · stdio · connected · \d+ tools/);
    expect(listed).toContain("everything__echo (asks)");

    tmux("send-keys", "-t", "mcp", "-l", 'add with everything__get-sum {"a": 2, "b": 3}');
    tmux("send-keys", "-t", "mcp", "Enter");
    await waitFor("the call's question", (screen) => screen.includes('? allow MCP server "everything" to run get-sum {"a":2,"b":3}? [y/N/a = always this tool]'));
    tmux("send-keys", "-t", "mcp", "y");
    const answered = await waitFor("the answer", (screen) => screen.includes("everything__get-sum answered: The sum of 2 and 3 is 5."));
    // The MCP call is shown like a built-in one: its name, arguments, duration and one-line result.
    expect(answered).toMatch(/✓ everything__get-sum \{"a":2,"b":3\} · \d+ms · The sum of 2 and 3 is 5\./);

    await waitFor("the idle prompt", (screen) => screen.trimEnd().endsWith("❯ ask something (Ctrl-C twice to exit)"));
    tmux("send-keys", "-t", "mcp", "C-c");
    tmux("send-keys", "-t", "mcp", "C-c");
    await waitFor("the exit", (screen) => screen.includes("EXITED 0"));

    // The answer is remembered outside the workspace, without the server's env or header values.
    const remembered = JSON.parse(readFileSync(path.join(sessionStoreDir(repo.root, { XDG_STATE_HOME: STATE_HOME }), MCP_APPROVALS_FILE), "utf8"));
    expect(remembered).toEqual({ everything: { fingerprint: expect.stringMatching(/^[0-9a-f]{32}$/), decision: "allowed" } });

    // A second start does not ask again.
    start("again");
    const again = await waitForPane(capture("again"), "the second start's prompt", (screen) => screen.includes("❯ ask something"), 20_000);
    expect(again).not.toContain("? start MCP server");
    expect(again).toMatch(/MCP: everything \(\d+ tools\)/);
    tmux("send-keys", "-t", "again", "C-c");
    tmux("send-keys", "-t", "again", "C-c");
    await waitForPane(capture("again"), "the second exit", (screen) => screen.includes("EXITED 0"), 20_000);
  }, 90_000);
});
