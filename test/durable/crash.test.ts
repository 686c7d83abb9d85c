/**
 * Issue 20's crash test (SPEC R81): a child process runs the 5-turn session of crash-scenario.ts
 * (parallel batches, a `replay: "safe"` tool and two that are not; every other point through an
 * Agent, resumed with `agent.resume()`) on a file-backed store and is
 * SIGKILLed at a point drawn from a printed seed (by delivered-event count, or by wall time); a
 * new process then resumes the session to its end. Invariants, each point:
 *  - every tool call has exactly one result message;
 *  - no tool without `replay: "safe"` executed twice (counted by the tools in a side file);
 *  - the final transcript equals the uninterrupted run's, except results the resume documents as
 *    interrupted (`Tool NAME was interrupted before it finished; …`, R13) for non-safe calls.
 * CRASH_POINTS (default 10; `npm run test:crash`: 100), CRASH_SEED replays a tally.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../../src/index.js";
import { runAgentLoop } from "../../src/index.js";
import { openSqliteStore } from "../../src/sqlite.js";
import { seededRandom as random } from "../support/seeded-random.js";
import { crashAgent, crashSession, executionCounts, fixedClock, prompt } from "./crash-scenario.js";

const POINTS = Number(process.env.CRASH_POINTS ?? 10);
const SEED = process.env.CRASH_SEED !== undefined ? Number(process.env.CRASH_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) >>> 0;
const CHILD = fileURLToPath(new URL("./crash-child.ts", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "xstate-agent-crash-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));


interface ChildResult {
  signal: NodeJS.Signals | null;
  code: number | null;
  stderr: string;
}

function child(args: string[]): Promise<ChildResult> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ["--import", "tsx", CHILD, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    proc.stderr.on("data", (chunk) => (stderr += String(chunk)));
    proc.on("exit", (code, signal) => resolve({ code, signal, stderr }));
  });
}

const readOut = (path: string) => JSON.parse(readFileSync(path, "utf8")) as { messages: AgentMessage[]; delivered: number };
const INTERRUPTED = /^Tool \w+ was interrupted before it finished; its outcome is unknown, so it was not run again\.$/;
/** The scripted model stamps its messages with its own wall clock (timestamp, durationMs): not part of the comparison. */
const timeless = (messages: AgentMessage[]) => JSON.parse(JSON.stringify(messages, (key, value) => (key === "timestamp" || key === "durationMs" ? 0 : value))) as AgentMessage[];

function problems(messages: AgentMessage[], baseline: AgentMessage[], counts: Record<string, number>): { problems: string[]; interrupted: number } {
  const found: string[] = [];
  const calls = messages.flatMap((m) => (m.role === "assistant" ? (m as AssistantMessage).content.filter((b) => b.type === "toolCall") : []));
  const results = messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
  for (const call of calls) {
    const n = results.filter((r) => r.toolCallId === call.id).length;
    if (n !== 1) found.push(`${call.id} has ${n} results`);
  }
  for (const [id, n] of Object.entries(counts)) if (!id.endsWith("-read") && n > 1) found.push(`${id} (not replay-safe) executed ${n} times`);
  let interrupted = 0;
  const actual = timeless(messages);
  const expected = timeless(baseline);
  if (actual.length !== expected.length) found.push(`transcript has ${actual.length} messages, the uninterrupted run ${expected.length}`);
  actual.forEach((message, i) => {
    if (message.role === "toolResult" && INTERRUPTED.test(((message as ToolResultMessage).content[0] as { text: string }).text)) {
      interrupted++;
      if ((message as ToolResultMessage).toolCallId.endsWith("-read")) found.push(`${(message as ToolResultMessage).toolCallId} is replay-safe but was not re-run`);
      if ((expected[i] as ToolResultMessage | undefined)?.toolCallId !== (message as ToolResultMessage).toolCallId) found.push(`message ${i}: an interrupted result out of place`);
      return;
    }
    if (JSON.stringify(message) !== JSON.stringify(expected[i])) found.push(`message ${i} differs: ${JSON.stringify(message).slice(0, 120)}`);
  });
  return { problems: found, interrupted };
}

describe("issue 20: crash and resume (R81)", () => {
  it(`R81: ${POINTS} SIGKILLs at seeded points, each resumed to the end by a new process (CRASH_SEED=${SEED})`, { timeout: 60_000 + POINTS * 8_000 }, async () => {
    // The uninterrupted session, in this process (on the same kind of store): as a run, and through an Agent.
    const session = crashSession(join(root, "baseline-executions.txt"));
    const baseline = { messages: [] as AgentMessage[], delivered: 0 };
    const durable = { store: openSqliteStore(join(root, "baseline.db")), sessionId: "crash" };
    baseline.messages = await runAgentLoop([prompt], { messages: [], tools: session.tools }, session.config, () => void baseline.delivered++, undefined, session.streamFn, { durable, clock: fixedClock });
    const agentBaseline = crashAgent(session, { store: openSqliteStore(join(root, "baseline-agent.db")), sessionId: "crash" });
    await agentBaseline.prompt(prompt);
    const baselines = { run: baseline.messages, agent: agentBaseline.state.messages.slice() };
    const draw = random(SEED);
    const points = Array.from({ length: POINTS }, (_, i) =>
      // By event count mostly; every fifth by wall time (the run takes some hundred ms after start-up).
      i % 5 === 4 ? { killAfterMs: Math.floor(draw() * 400) } : { killAt: 1 + Math.floor(draw() * (baseline.delivered - 1)) },
    );
    const tally = { killed: 0, finishedFirst: 0, interrupted: 0, failed: [] as string[] };
    // Odd points run the session through an Agent (agent.resume() in the new process).
    const play = async (point: (typeof points)[number], i: number) => {
      const dir = join(root, `p${i}`);
      const via = i % 2 === 1 ? "agent" : "run";
      const first = await child([via === "agent" ? "agent-run" : "run", dir, join(dir, "first.json"), String(point.killAt ?? -1), String(point.killAfterMs ?? -1)]);
      if (first.signal === "SIGKILL") tally.killed++;
      else if (first.code === 0) tally.finishedFirst++;
      else return void tally.failed.push(`point ${i} (${via}, ${JSON.stringify(point)}): the first process failed: ${first.stderr.slice(0, 400)}`);
      const second = await child([via === "agent" ? "agent-resume" : "resume", dir, join(dir, "out.json")]);
      if (second.code !== 0) return void tally.failed.push(`point ${i} (${via}, ${JSON.stringify(point)}): the resume failed: ${second.stderr.slice(0, 400)}`);
      const messages = first.code === 0 ? readOut(join(dir, "first.json")).messages : readOut(join(dir, "out.json")).messages;
      const found = problems(messages, baselines[via], executionCounts(join(dir, "executions.txt")));
      tally.interrupted += found.interrupted;
      if (found.problems.length > 0) tally.failed.push(`point ${i} (${via}, ${JSON.stringify(point)}): ${found.problems.join("; ")}`);
    };
    // Two at a time: each point is two processes, one after the other.
    for (let i = 0; i < points.length; i += 2) await Promise.all(points.slice(i, i + 2).map((point, k) => play(point, i + k)));
    console.log(
      `crash test (CRASH_SEED=${SEED}): ${POINTS} points, ${tally.killed} killed mid-run and resumed, ${tally.finishedFirst} finished before their kill point, ` +
        `${tally.interrupted} interrupted-call results, ${tally.failed.length} failed`,
    );
    expect(tally.failed).toEqual([]);
    expect(tally.killed).toBeGreaterThan(0);
  });
});
