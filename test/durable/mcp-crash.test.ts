/**
 * SPEC R80, R81, R13 with MCP tools: a session whose MCP call is in flight on the server when its
 * process is SIGKILLed. A new process connects to the server afresh (MCP tools resolve by name
 * from the freshly provided client), resumes the session, and never repeats a call that is not
 * replay-safe: the server's own log shows each call once, and the transcript documents the
 * interrupted call. The completed call was journaled (intent, then outcome) and is not run again.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/index.js";
import { openSqliteStore } from "../../src/sqlite.js";

const CHILD = fileURLToPath(new URL("./mcp-crash-child.ts", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "xstate-agent-mcp-crash-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function child(args: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ["--import", "tsx", CHILD, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    proc.stderr.on("data", (chunk) => (stderr += String(chunk)));
    proc.on("exit", (code, signal) => resolve({ code, signal, stderr }));
  });
}

describe("R81 with MCP tools: kill -9 mid-call, resumed by a new process", () => {
  it("R81: the in-flight MCP call (not replay-safe) is not repeated; the completed one is not re-run", { timeout: 60_000 }, async () => {
    const first = await child(["run", root, join(root, "first.json")]);
    expect({ signal: first.signal, stderr: first.stderr }).toEqual({ signal: "SIGKILL", stderr: "" });
    const second = await child(["resume", root, join(root, "out.json")]);
    expect({ code: second.code, stderr: second.stderr }).toEqual({ code: 0, stderr: "" });

    const messages = JSON.parse(readFileSync(join(root, "out.json"), "utf8")) as AgentMessage[];
    const shown = messages
      .filter((message) => message.role !== "system")
      .map((message) => {
        if (message.role === "toolResult") return `result ${message.toolCallId}: ${(message.content[0] as { text: string }).text}`;
        if (message.role === "assistant") return `assistant: ${message.content.map((block) => (block.type === "text" ? block.text : block.type === "toolCall" ? `call ${block.name}` : "")).join(" | ")}`;
        return `${message.role}`;
      });
    expect(shown).toEqual([
      "user",
      "assistant: Looking up. | call fixture__lookup",
      "result t0-lookup: value of a",
      "assistant: Now the slow one. | call fixture__slow",
      "result t1-slow: Tool fixture__slow was interrupted before it finished; its outcome is unknown, so it was not run again.",
      "assistant: All done.",
    ]);
    // The server's log across both processes: each call exactly once (the kill ended the first server too).
    const log = readFileSync(join(root, "server.log"), "utf8").trim().split("\n").map((line) => line.replace(/^\d+ /, ""));
    expect(log).toEqual(["lookup a", "slow start"]);
    // Journaled like any tool: an intent record before each MCP execute (the resumed process writes
    // its own for the interrupted call, whose outcome R13's rule then gives without calling the server).
    const store = openSqliteStore(join(root, "sessions.db"));
    try {
      const intents = store.readSession("mcp-crash").records().map((stored) => stored.record as { k: string; toolName?: string }).filter((record) => record.k === "intent");
      expect(intents.map((record) => record.toolName)).toEqual(["fixture__lookup", "fixture__slow", "fixture__slow"]);
    } finally {
      store.close();
    }
  });
});
