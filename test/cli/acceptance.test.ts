/**
 * The README's first command, as a newcomer runs it: `npm start -- --offline "summarize this
 * repository"` from the repository root (no terminal on stdin), with and without `--trace`.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkTrace, REPO } from "./fixture.js";

const dir = mkdtempSync(path.join(tmpdir(), "xal-accept-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function npmStart(...args: string[]) {
  // Sessions go to this test's directory, not the real ~/.local/state.
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: path.join(dir, "state") };
  delete env.ANTHROPIC_API_KEY;
  return spawnSync("npm", ["start", "--silent", "--", ...args], { cwd: REPO, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
}

describe('npm start -- --offline "summarize this repository"', () => {
  it("exits 0 with a streamed answer and tool activity", () => {
    const result = npmStart("--offline", "summarize this repository");
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("offline demo model — set ANTHROPIC_API_KEY for Claude");
    expect(result.stdout).toMatch(/✓ search_text \/TODO\|FIXME\/ · \d\.\ds · \d+ match/);
    expect(result.stdout).toContain("Here is what I found in **xstate-agent-loop**");
    expect(result.stdout).toMatch(/\n── \d+ turns · \d+ tool calls · /);
  }, 60_000);

  it("with --trace writes a valid trace: first event agent_start, last agent_end", () => {
    const file = path.join(dir, "t.jsonl");
    const result = npmStart("--offline", "--trace", file, "summarize this repository");
    expect(result.status).toBe(0);
    const trace = checkTrace(readFileSync(file, "utf8"));
    expect(trace.records[0]).toMatchObject({ type: "trace", version: 1, model: { id: "offline-demo", provider: "offline" }, cwd: REPO });
    expect(trace.events[0].event.type).toBe("agent_start");
    expect(trace.events.at(-1)!.event.type).toBe("agent_end");
    expect(trace.states.some((record) => record.actor === "run" && record.status === "done")).toBe(true);
    expect(trace.states.some((record) => record.actor === "tool:2")).toBe(true);
    expect(trace.notes.map((note) => note.text)).toContain("steering queued: Also count the test files.");
  }, 60_000);
});
