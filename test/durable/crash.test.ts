/**
 * The crash test (SPEC R81): a child process runs the 5-turn session of crash-scenario.ts
 * (parallel batches, a `replay: "safe"` tool and two that are not; every other point through an
 * Agent, resumed with `agent.resume()`) on a file-backed store and is SIGKILLed at a point drawn
 * from a printed seed: inside a listener, mid-response, right after a record (before the events it
 * produces are delivered), between a response's last delta and its record, or by wall time; a new
 * process then resumes the session to its end (every other pair of points with `after`: the last
 * sequence number the first process's subscriber finished). The model answers a request made
 * again differently, as a real one would. Invariants, each point:
 *  - every tool call has exactly one result message; no tool without `replay: "safe"` executed
 *    twice; the transcript equals the uninterrupted run's (a re-asked answer's words aside), except
 *    results the resume documents as interrupted (R13);
 *  - delivery by sequence (R81), against the replay of the final journal (R83): every event a
 *    subscriber got is the replay's event of that number with the same provisional flag (nothing is
 *    delivered before it is in a record); each process's numbers run without a gap or a repeat; the
 *    second process starts no later than right after the first's last finished event (no gap) and,
 *    with `after`, exactly there; with `after`, what the first process finished plus what the second
 *    delivered is the replay's sequence exactly: each event once, `turn_start` and retractions
 *    included, no message spliced from two answers.
 * A second tally runs the session with streaming tool execution (R70: calls start while the model
 * streams), mostly killed mid-response; what a consumer keeps after dropping the provisional events
 * each retraction names is never a message spliced from two answers.
 * A double-crash mode (both sessions) kills the resumed process again at a second point (in a listener,
 * the retraction's included, mid-response, after a record, before a response's record) and resumes once
 * more with `after`: the consumer's view over the three processes is the replay, with no number
 * delivered twice (a retraction delivered again fails the point, and is counted in the tally's line).
 * CRASH_POINTS (default 10, and half as many R70 and double-crash points, at least 4; CRASH_DOUBLE_POINTS;
 * `npm run test:crash`: 100),
 * CRASH_SEED replays a tally.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../../src/index.js";
import { runAgentLoop } from "../../src/index.js";
import { openSqliteStore } from "../../src/sqlite.js";
import { seededRandom as random } from "../support/seeded-random.js";
import { crashAgent, crashSession, executionCounts, fixedClock, prompt } from "./crash-scenario.js";
import { replayRun } from "../../src/durable/replay.js";
import { project } from "./crash-projection.js";

const POINTS = Number(process.env.CRASH_POINTS ?? 10);
const SEED = process.env.CRASH_SEED !== undefined ? Number(process.env.CRASH_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) >>> 0;
const CHILD = fileURLToPath(new URL("./crash-child.ts", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "xstate-agent-crash-"));
// The child bundled once, run with plain `node`: under tsx each child spent ~4.5 s compiling before
// its first event, which made the per-point timeout depend on the machine's load. Packages stay
// external, resolved from this checkout's node_modules (the bundle is written inside it).
const CACHE = fileURLToPath(new URL("../../node_modules/.cache/", import.meta.url));
mkdirSync(CACHE, { recursive: true });
const BUNDLE_DIR = mkdtempSync(join(CACHE, "crash-child-"));
const BUNDLE = join(BUNDLE_DIR, "crash-child.mjs");
beforeAll(async () => {
  await build({ entryPoints: [CHILD], bundle: true, platform: "node", format: "esm", target: "node20", packages: "external", outfile: BUNDLE, logLevel: "silent" });
}, 60_000);
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(BUNDLE_DIR, { recursive: true, force: true });
});


interface ChildResult {
  signal: NodeJS.Signals | null;
  code: number | null;
  stderr: string;
}

function child(args: string[], streaming: boolean): Promise<ChildResult> {
  return new Promise((resolve) => {
    const env = { ...process.env, CRASH_STREAMING: streaming ? "1" : "0" };
    const proc = spawn(process.execPath, [BUNDLE, ...args], { stdio: ["ignore", "ignore", "pipe"], env });
    let stderr = "";
    proc.stderr.on("data", (chunk) => (stderr += String(chunk)));
    proc.on("exit", (code, signal) => resolve({ code, signal, stderr }));
  });
}

const readOut = (path: string) => JSON.parse(readFileSync(path, "utf8")) as { messages: AgentMessage[]; delivered: number };
const INTERRUPTED = /^Tool \w+ was interrupted before it finished; its outcome is unknown, so it was not run again\.$/;
/** The scripted model stamps its messages with its own wall clock (timestamp, durationMs): not part of the comparison. */
const timeless = (messages: AgentMessage[]) =>
  JSON.parse(JSON.stringify(messages, (key, value) => (key === "timestamp" || key === "durationMs" ? 0 : typeof value === "string" ? value.replace(/\(asked again \d+\) /, "") : value))) as AgentMessage[];

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


interface Logged {
  seq: number | null;
  provisional: boolean;
  key: string;
}

/** A process's subscriber log: the events it started on, and the last one it finished. */
function readLog(path: string): { events: Logged[]; acked: number; finished: number } {
  const events: Logged[] = [];
  let acked = 0;
  let finished = 0;
  if (!existsSync(path)) return { events, acked, finished };
  for (const line of readFileSync(path, "utf8").split("\n").filter(Boolean)) {
    const entry = JSON.parse(line) as Logged & { ack?: number | null };
    if ("ack" in entry) (acked = typeof entry.ack === "number" ? entry.ack : acked + 1), finished++;
    else events.push(entry);
  }
  return { events, acked, finished };
}

type Log = ReturnType<typeof readLog>;

/** An event of the final journal's replay (R83): its projection and the flag it was delivered with. */
interface Replayed {
  key: string;
  provisional: boolean;
}

/**
 * R81's delivery checks across any number of processes, each resumed after the one before it died:
 * `withAfter`, with `after` = the last number the subscriber finished in the processes before (the
 * double-crash mode: killed, resumed and killed again, resumed), else without it. Every event any
 * process delivered is the replay's event of that number, with the same flag (nothing is delivered
 * before it is in a record); each process's numbers run without a gap or a repeat; a resumed
 * process starts no later than right after the last finished event and, with `after`, exactly
 * there: no number twice, a retraction included. With `after`, the consumer's view (what each
 * process finished, then what the last delivered) is the replay exactly, and never holds a spliced message.
 */
export function chainProblems(logs: Log[], replay: readonly Replayed[], withAfter: boolean): string[] {
  const found: string[] = [];
  let acked = 0;
  const view: Logged[] = [];
  logs.forEach((log, p) => {
    const name = `process ${p + 1}`;
    log.events.forEach((event, i) => {
      const seq = event.seq!;
      if (i > 0 && seq !== log.events[i - 1].seq! + 1) found.push(`${name}: a gap or a repeat: ${log.events[i - 1].seq} then ${seq} (${event.key})`);
      const expected = replay[seq - 1];
      if (expected?.key !== event.key) found.push(`${name}: seq ${seq} was ${event.key}, the replay has ${expected?.key ?? "nothing"}`);
      else if (expected.provisional !== event.provisional) found.push(`${name}: seq ${seq} (${event.key}) was delivered ${event.provisional ? "provisional" : "firm"}, the replay has it ${expected.provisional ? "provisional" : "firm"}`);
    });
    if (p > 0 && log.events.length > 0) {
      const from = log.events[0].seq!;
      if (from > acked + 1) found.push(`${name}: a gap: the processes before finished ${acked}, it delivered from ${from}`);
      if (withAfter && from !== acked + 1) {
        const repeated = log.events.filter((event) => event.seq! <= acked);
        const retraction = repeated.some((event) => event.key.startsWith("message_discarded:interrupted"));
        found.push(`${name}: with after=${acked} it delivered from ${from} (${log.events[0].key})${retraction ? ": a retraction delivered again" : ""}`);
      }
    }
    const last = p === logs.length - 1;
    const taken = last ? log.events : log.events.slice(0, log.finished);
    for (const event of taken) if (event.seq! > (view.at(-1)?.seq ?? 0)) view.push(event);
    if (log.finished > 0) acked = log.acked;
    found.push(...splices(log.events).map((problem) => `${name}: ${problem}`));
  });
  if (withAfter) {
    const keys = view.map((event) => event.key);
    const expected = replay.map((event) => event.key);
    if (JSON.stringify(keys) !== JSON.stringify(expected)) {
      const at = keys.findIndex((key, i) => key !== expected[i]);
      const i = at === -1 ? keys.length : at;
      found.push(`the consumer's view differs from the replay at ${i + 1}: ${keys[i] ?? "nothing"} (seq ${view[i]?.seq}) / ${expected[i] ?? "nothing"}; view ${keys.length}, replay ${expected.length}`);
    }
    found.push(...splices(view).map((problem) => `delivered: ${problem}`));
  }
  return found;
}

/**
 * No message spliced from two answers, as a consumer sees it: each retraction drops the provisional events it was
 * given from `fromSeq` on; then every event of an assistant message (start, updates) must be a
 * prefix of the answer its `message_end` holds (the re-requested answer differs from its first delta).
 */
export function splices(events: readonly Logged[]): string[] {
  const kept: Logged[] = [];
  for (const event of events) {
    const retraction = /^message_discarded:interrupted:(\d+)$/.exec(event.key);
    if (retraction) {
      // As the contract says: drop what was provisional from `fromSeq` on (firm events stay).
      const fromSeq = Number(retraction[1]);
      for (let i = kept.length - 1; i >= 0; i--) if (kept[i].seq! >= fromSeq && kept[i].provisional) kept.splice(i, 1);
      continue;
    }
    kept.push(event);
  }
  const found: string[] = [];
  let open: Logged[] = [];
  for (const event of kept) {
    const match = /^message_(start|update|end):assistant:(.*)$/s.exec(event.key);
    if (!match) continue;
    if (match[1] === "start") {
      if (open.length > 0) found.push(`seq ${event.seq}: a message_start inside the message started at ${open[0].seq}`);
      open = [event];
    } else if (match[1] === "update") open.push(event);
    else {
      const answer = match[2];
      const spliced = open.find((part) => !answer.startsWith(part.key.replace(/^message_(start|update):assistant:/, "")));
      if (spliced) found.push(`seq ${event.seq}: its message spliced from two answers (${spliced.key} at ${spliced.seq}, then ${answer})`);
      open = [];
    }
  }
  return found;
}

/** One tally: `points` kills drawn from `kinds`, each resumed by a new process; `streaming`: the session with R70 on. */
async function crashRun(POINTS: number, streaming: boolean, kinds: readonly string[], tag: string, double = false): Promise<void> {
  const baselineDir = join(root, `baseline-${tag}`);
  const session = crashSession(join(root, `baseline-${tag}-executions.txt`), { streaming });
  const durable = { store: openSqliteStore(join(baselineDir, "sessions.db")), sessionId: "crash" };
  let events = 0;
  let updates = 0;
  const baselineMessages = await runAgentLoop([prompt], { messages: [], tools: session.tools }, session.config, (event) => {
    events++;
    if (event.type === "message_update") updates++;
  }, undefined, session.streamFn, { durable, clock: fixedClock });
  const agentBaseline = crashAgent(session, { store: openSqliteStore(join(root, `baseline-${tag}-agent.db`)), sessionId: "crash" });
  await agentBaseline.prompt(prompt);
  const baselines = { run: baselineMessages, agent: agentBaseline.state.messages.slice() };
  const appends = durable.store.readSession("crash").records().length;
  const responses = durable.store.readSession("crash").records().filter((r) => (r.record as { k: string }).k === "response").length || 6;
  const draw = random(SEED ^ (streaming ? 0x70 : 0x33));
  // `share`: a resumed process has the rest of the session only, so its kill points are drawn from the first part.
  const pick = (kind: string, share = 1) => {
    const n = kind === "event" ? 1 + Math.floor(draw() * share * (events - 1)) : kind === "update" ? 1 + Math.floor(draw() * share * updates) : kind === "append" ? 1 + Math.floor(draw() * share * (appends - 1)) : kind === "response" ? 1 + Math.floor(draw() * share * responses) : Math.floor(draw() * share * 400);
    return `${kind}:${n}`;
  };
  const points = Array.from({ length: POINTS }, (_, i) => pick(kinds[i % kinds.length]));
  // The double-crash mode's second kill, in the resumed process: inside a listener (the retraction's included),
  // mid-response (after the retraction), after a record, before a response's record.
  const seconds = points.map((_, i) => (double ? pick(["event", "update", "append", "response"][(i >> 1) % 4], 0.5) : "none"));
  const tally = { killed: 0, finishedFirst: 0, killedTwice: 0, pastRetraction: 0, repeatedRetractions: 0, interrupted: 0, retracted: 0, reasked: 0, failed: [] as string[] };
  /** The final journal's events, projected, with their flags; counted into the tally. */
  const replayOf = async (dir: string): Promise<Replayed[]> => {
    const store = openSqliteStore(join(dir, "sessions.db"));
    const runs = await replayRun(store.readSession("crash").records());
    store.close();
    const replay = runs.flatMap((run) => run.events.map((event, i) => ({ key: project(event), provisional: run.provisional[i] })));
    tally.retracted += replay.filter((event) => event.key.startsWith("message_discarded:interrupted")).length;
    // A re-requested answer (the model words it differently) that reached its end.
    tally.reasked += replay.filter((event) => event.key.startsWith("message_end:assistant:(asked again")).length;
    return replay;
  };
  const play = async (point: string, i: number) => {
    const dir = join(root, `${tag}-q${i}`);
    const via = i % 2 === 1 ? "agent" : "run";
    const withAfter = double || Math.floor(i / 2) % 2 === 0;
    const label = `point ${i} (${via}, ${point}${double ? ` then ${seconds[i]}` : ""}${withAfter ? ", after" : ""})`;
    const first = await child([via === "agent" ? "agent-run" : "run", dir, join(dir, "first.json"), point], streaming);
    if (first.signal === "SIGKILL") tally.killed++;
    else if (first.code === 0) tally.finishedFirst++;
    else return void tally.failed.push(`${label}: the first process failed: ${first.stderr.slice(0, 400)}`);
    if (double && first.code !== 0) return playTwice(dir, via, label);
    const second = await child([via === "agent" ? "agent-resume" : "resume", dir, join(dir, "out.json"), "none", withAfter ? "ack" : "none"], streaming);
    if (second.code !== 0) return void tally.failed.push(`${label}: the resume failed: ${second.stderr.slice(0, 400)}`);
    const messages = first.code === 0 ? readOut(join(dir, "first.json")).messages : readOut(join(dir, "out.json")).messages;
    const found = problems(messages, baselines[via], executionCounts(join(dir, "executions.txt")));
    tally.interrupted += found.interrupted;
    const replay = await replayOf(dir);
    const delivery = chainProblems([readLog(join(dir, "first.json.events")), readLog(join(dir, "out.json.events"))], replay, withAfter && first.code !== 0);
    tally.repeatedRetractions += delivery.filter((problem) => problem.endsWith("a retraction delivered again")).length;
    const all = found.problems.concat(delivery);
    if (all.length > 0) tally.failed.push(`${label}: ${all.slice(0, 6).join("; ")}`);
  };
  /** After the first kill: resumed with `after` and killed again at its second point, then resumed with `after` once more. */
  const playTwice = async (dir: string, via: "run" | "agent", label: string) => {
    const i = Number(/-q(\d+)$/.exec(dir)![1]);
    const mode = via === "agent" ? "agent-resume" : "resume";
    const second = await child([mode, dir, join(dir, "mid.json"), seconds[i], "ack"], streaming);
    if (second.signal !== "SIGKILL" && second.code !== 0) return void tally.failed.push(`${label}: the first resume failed: ${second.stderr.slice(0, 400)}`);
    const killedTwice = second.signal === "SIGKILL";
    if (killedTwice) {
      tally.killedTwice++;
      // The suspected case: the last resume's `after` already past a retraction the first resume delivered.
      const mid = readLog(join(dir, "mid.json.events"));
      if (mid.events.slice(0, mid.finished).some((event) => event.key.startsWith("message_discarded:interrupted"))) tally.pastRetraction++;
      const third = await child([mode, dir, join(dir, "out.json"), "none", "ack2"], streaming);
      if (third.code !== 0) return void tally.failed.push(`${label}: the second resume failed: ${third.stderr.slice(0, 400)}`);
    }
    const messages = readOut(join(dir, killedTwice ? "out.json" : "mid.json")).messages;
    const found = problems(messages, baselines[via], executionCounts(join(dir, "executions.txt")));
    tally.interrupted += found.interrupted;
    const replay = await replayOf(dir);
    const logs = ["first.json", "mid.json", ...(killedTwice ? ["out.json"] : [])].map((name) => readLog(join(dir, `${name}.events`)));
    const chain = chainProblems(logs, replay, true);
    tally.repeatedRetractions += chain.filter((problem) => problem.endsWith("a retraction delivered again")).length;
    const all = found.problems.concat(chain);
    if (all.length > 0) tally.failed.push(`${label}${killedTwice ? "" : " (the first resume finished)"}: ${all.slice(0, 6).join("; ")}`);
  };
  for (let i = 0; i < points.length; i += 2) await Promise.all(points.slice(i, i + 2).map((point, k) => play(point, i + k)));
  console.log(
    `crash test 33${streaming ? " (R70)" : ""}${double ? " (double)" : ""} (CRASH_SEED=${SEED}): ${POINTS} points, ${tally.killed} killed and resumed, ${tally.finishedFirst} finished before their kill point, ` +
      (double ? `${tally.killedTwice} killed again and resumed (${tally.pastRetraction} with after past a retraction), ` : "") +
      `${tally.interrupted} interrupted-call results, ${tally.retracted} retractions, ${tally.reasked} re-requested answers, ${tally.repeatedRetractions} retractions delivered again, ${tally.failed.length} with violations`,
  );
  expect(tally.failed).toEqual([]);
  expect(tally.repeatedRetractions).toBe(0);
  // A retraction is followed by the re-requested answer, which the model words differently.
  if (tally.retracted > 0) expect(tally.reasked).toBeGreaterThan(0);
  expect(tally.killed).toBeGreaterThan(0);
}

/** R70's points: mostly mid-response (calls start while the model streams, so a partial response is journaled). */
const R70_POINTS = Math.max(4, Math.ceil(POINTS / 2));
// (Per point: two children of ~0.5 s start-up plus the session's run; the margin covers a loaded machine.)
const perPoint = 8_000;
/** The double-crash mode's points: a handful by default, CRASH_DOUBLE_POINTS (or CRASH_POINTS) for more. */
const DOUBLE_POINTS = Number(process.env.CRASH_DOUBLE_POINTS ?? Math.max(4, Math.ceil(POINTS / 2)));

describe("issue 33: delivery by sequence across SIGKILLs (R81)", () => {
  it(`R81: ${POINTS} SIGKILLs at seeded points (in listeners, mid-response, after records, before a response's record), each resumed by a new process (CRASH_SEED=${SEED})`, { timeout: 60_000 + POINTS * perPoint }, async () => {
    await crashRun(POINTS, false, ["event", "update", "append", "response", "event", "ms"], "33");
  });

  it(`R81 with R70: ${R70_POINTS} SIGKILLs with calls started while the model streams; a re-requested answer is never spliced with the first one's start (CRASH_SEED=${SEED})`, { timeout: 60_000 + R70_POINTS * perPoint }, async () => {
    await crashRun(R70_POINTS, true, ["update", "append", "update", "event", "response", "append"], "r70");
  });

  it(`R81 across two crashes: ${DOUBLE_POINTS} points killed, resumed with after, killed again (in a listener, mid-response, after a record, before a response's record), resumed with after again (CRASH_SEED=${SEED})`, { timeout: 60_000 + DOUBLE_POINTS * perPoint * 1.5 }, async () => {
    await crashRun(DOUBLE_POINTS, false, ["event", "update", "append", "response"], "x2", true);
  });

  it(`R81 with R70 across two crashes: ${DOUBLE_POINTS} points, each first kill mid-response or after a record (CRASH_SEED=${SEED})`, { timeout: 60_000 + DOUBLE_POINTS * perPoint * 1.5 }, async () => {
    await crashRun(DOUBLE_POINTS, true, ["update", "append", "update", "response"], "r70x2", true);
  });
});
