/**
 * Issue 20 acceptance, R82 with R81: process 1 runs until a call of a parallel batch awaits
 * approval and exits; process 2 resumes the session from the SQLite store and approves; the batch
 * completes, each sibling executed exactly once (counted in a side file, outside the store).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import type { AgentMessage, ToolResultMessage } from "../../src/index.js";
import { executionCounts } from "./crash-scenario.js";

const CHILD = fileURLToPath(new URL("./approval-child.ts", import.meta.url));
const child = (mode: string, dir: string, out: string) => spawnSync(process.execPath, ["--import", "tsx", CHILD, mode, dir, out], { encoding: "utf8", timeout: 60_000 });

it("R82, R81: a call waits for approval; its process exits; a new process resumes, approves, and the batch completes with each sibling run once", () => {
  const dir = mkdtempSync(join(tmpdir(), "approval-resume-"));
  try {
    const out = join(dir, "out.json");
    const first = child("wait", dir, out);
    expect(first.status, first.stderr).toBe(0);
    // Process 1 ran the two siblings and left the write waiting.
    expect(executionCounts(join(dir, "executions"))).toEqual({ "t0-read": 1, "t0-fetch": 1 });
    const second = child("approve", dir, out);
    expect(second.status, second.stderr).toBe(0);
    const { approved, messages } = JSON.parse(readFileSync(out, "utf8")) as { approved: { toolCallId: string; toolName: string }; messages: AgentMessage[] };
    expect(approved).toMatchObject({ toolCallId: "t0-write", toolName: "write" });
    const results = messages.filter((message): message is ToolResultMessage => message.role === "toolResult");
    expect(results).toHaveLength(15);
    expect(results.every((message) => !message.isError)).toBe(true);
    // Every call ran exactly once across the two processes: the siblings never again.
    const counts = executionCounts(join(dir, "executions"));
    expect(Object.keys(counts)).toHaveLength(15);
    expect(Object.values(counts).every((count) => count === 1)).toBe(true);
    expect(messages.at(-1)).toMatchObject({ role: "assistant", content: [{ type: "text", text: "All done." }] });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
