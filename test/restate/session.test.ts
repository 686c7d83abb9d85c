/**
 * R90 on a real Restate server: a session is a keyed object whose steps are journaled; a worker
 * killed mid-run is replaced and the run continues from the journal, running no completed step
 * again (R81's invariants, counted outside the worker).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { AgentMessage, ToolResultMessage } from "../../src/types.js";
import { startLocalRestateServer, type LocalRestateServer } from "../../src/restate/local-server.js";
import { freePort, startBalancer, startWorker, type Worker } from "./support.js";
import { seededRandom } from "../support/seeded-random.js";
import { readSessionJournal } from "../../src/restate/journal-client.js";
import { replayRun } from "../../src/durable/replay.js";

let server: LocalRestateServer;

beforeAll(async () => {
  server = await startLocalRestateServer({ retryIntervalMs: 50 });
}, 30_000);
afterAll(() => server?.stop());

const call = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${server.ingressUrl}/${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`);
  return response.json();
};

/**
 * R83 across workers: the session's journal, read through the ingress, replays offline (no app
 * code) to the event log its clients read, byte for byte; returns the replayed runs.
 */
const expectOfflineReplay = async (key: string) => {
  const records = await readSessionJournal(server.ingressUrl, key, { pageSize: 100 });
  expect(records.map((entry) => entry.seq)).toEqual(Array.from({ length: records.length }, (_, i) => i + 1));
  const runs = await replayRun(records);
  const { events } = (await call(`agentSession/${key}/events`, { limit: 100_000 })) as { events: { event: unknown }[] };
  expect(runs.flatMap((run) => run.events).map((event) => JSON.stringify(event))).toEqual(events.map((entry) => JSON.stringify(entry.event)));
  return { runs, records };
};

/**
 * R81: a session prompted on a worker that is SIGKILLed at `point` (after that many tool
 * executions, or that many ms into the run) and replaced on the same port.
 */
async function killMidRun(key: string, point: { kind: "executions" | "ms"; at: number }, env: Record<string, string>) {
  const port = await freePort();
  const first = await startWorker(port, env);
  await server.registerDeployment(`http://127.0.0.1:${port}`);
  const reply = call(`agentSession/${key}/prompt`, { text: key }, { "idempotency-key": key });
  if (point.kind === "executions") await first.executions(point.at);
  else await new Promise((resolve) => setTimeout(resolve, point.at));
  await first.kill();
  const second = await startWorker(port, env);
  return { first, second, reply };
}

/** A worker for the tests of one describe block: started and registered before them, killed after. */
function blockWorker(env: Record<string, string> = {}): { worker: Worker } {
  const block = {} as { worker: Worker };
  beforeAll(async () => {
    block.worker = await startWorker(await freePort(), env);
    await server.registerDeployment(`http://127.0.0.1:${block.worker.port}`);
  }, 30_000);
  afterAll(() => block.worker?.kill());
  return block;
}

/** A worker of its own, registered for the test's duration, then killed. */
const withWorker = async <T>(env: Record<string, string>, body: (worker: Worker) => Promise<T>): Promise<T> => {
  const worker = await startWorker(await freePort(), env);
  await server.registerDeployment(`http://127.0.0.1:${worker.port}`);
  try {
    return await body(worker);
  } finally {
    await worker.kill();
  }
};

const results = (messages: AgentMessage[]) => messages.filter((message): message is ToolResultMessage => message.role === "toolResult");

/**
 * R81: the transcript the uninterrupted session has (the worker's script), with the interrupted
 * calls' results replaced by R13's text; compared by role, call ids and texts (not timestamps).
 */
const shape = (messages: AgentMessage[]) =>
  messages
    .filter((message) => message.role !== "system")
    .map((message) =>
      message.role === "toolResult"
        ? `result ${message.toolCallId}: ${message.content.map((block) => (block.type === "text" ? block.text : "")).join("")}`
        : message.role === "assistant"
          ? `assistant ${message.content.map((block) => (block.type === "toolCall" ? block.id : block.type === "text" ? block.text : block.type)).join(",")}`
          : `${message.role}`,
    );
const uninterrupted = (key: string, interrupted: ReadonlySet<string>) => [
  "user",
  ...Array.from({ length: 5 }, (_, turn) => {
    const ids = [0, 1, 2].map((i) => `${key}:t${turn}-${i}`);
    const interruptedText = "Tool work was interrupted before it finished; its outcome is unknown, so it was not run again.";
    return [`assistant ${ids.join(",")}`, ...ids.map((id) => `result ${id}: ${interrupted.has(id) ? interruptedText : `done ${id}`}`)];
  }).flat(),
  "assistant all done",
];

const expectCompletedSession = (messages: AgentMessage[]) => {
  const calls = messages.flatMap((message) => (message.role === "assistant" ? message.content.filter((block) => block.type === "toolCall") : []));
  expect(calls).toHaveLength(15);
  // R81: every tool call has exactly one result.
  const resultIds = results(messages).map((message) => message.toolCallId);
  expect([...resultIds].sort()).toEqual(calls.map((block) => (block as { id: string }).id).sort());
  const last = messages.at(-1)!;
  expect(last.role === "assistant" && last.content).toEqual([{ type: "text", text: "all done" }]);
};

describe("R90: sessions as keyed Restate objects", () => {
  const shared = blockWorker();

  it("R90: a 5-turn parallel-tool session runs to the end; its transcript and numbered events are the object's state", async () => {
    const response = (await call("agentSession/one/prompt", { text: "go" })) as { messages: AgentMessage[]; lastEventId: number };
    expect(response.messages.find((message) => message.role === "user")).toMatchObject({ content: [{ type: "text", text: "go" }] });
    expectCompletedSession(response.messages);
    expect(new Set(shared.worker.executed.filter((id) => id.startsWith("go:"))).size).toBe(15);
    const state = (await call("agentSession/one/state", null)) as { messages: AgentMessage[]; running: boolean; lastEventId: number };
    expect(state.running).toBe(false);
    expect(state.messages).toEqual(response.messages);
    expect(state.lastEventId).toBe(response.lastEventId);
    // Resumable from any id: the events after 10 are the tail of all of them.
    const all = (await call("agentSession/one/events", { after: 0, limit: 10_000 })) as { events: { id: number; event: { type: string } }[] };
    expect(all.events.map((entry) => entry.id)).toEqual(Array.from({ length: response.lastEventId }, (_, i) => i + 1));
    expect(all.events[0].event.type).toBe("agent_start");
    expect(all.events.at(-1)!.event.type).toBe("agent_end");
    expect(all.events.filter((entry) => entry.event.type === "tool_execution_end")).toHaveLength(15);
    const tail = (await call("agentSession/one/events", { after: 10, limit: 10_000 })) as { events: unknown[] };
    expect(tail.events).toEqual(all.events.slice(10));
    const { runs } = await expectOfflineReplay("one");
    expect(runs).toHaveLength(1);
    expect(runs[0].messages).toEqual(response.messages);
  });

  it("R90: a second prompt continues the session from its stored transcript", async () => {
    const before = (await call("agentSession/two/prompt", { text: "first" })) as { messages: AgentMessage[] };
    const after = (await call("agentSession/two/prompt", { text: "again" })) as { messages: AgentMessage[] };
    // The script ends at once when the transcript already has five turns.
    expect(after.messages.filter((message) => message.role !== "system").map((message) => message.role)).toEqual(["user", "assistant"]);
    const state = (await call("agentSession/two/state", null)) as { messages: AgentMessage[] };
    expect(state.messages).toEqual([...before.messages, ...after.messages]);
    // R83: both runs replay, one after the other, from the one session journal.
    const { runs } = await expectOfflineReplay("two");
    expect(runs.map((run) => run.messages)).toEqual([before.messages, after.messages]);
  });
});

describe("R90: steering and follow-up messages through the session's inbox", () => {
  const shared = blockWorker({ TOOL_MS: "400" });

  const finalText = (messages: AgentMessage[]) => {
    const last = messages.at(-1)!;
    return last.role === "assistant" ? last.content.map((block) => (block.type === "text" ? block.text : "")).join("") : undefined;
  };

  it("R90, R3: a message steered while a tool runs reaches the next request of the same run", async () => {
    const reply = call("agentSession/echo-steer/prompt", { text: "echo-steer" });
    await shared.worker.executions(shared.worker.executed.length + 1);
    expect(await call("agentSession/echo-steer/steer", { text: "also this" })).toEqual({ queued: true });
    const response = (await reply) as { messages: AgentMessage[] };
    expect(finalText(response.messages)).toBe("heard: echo-steer|also this");
  });

  it("R90, R4: a follow-up queued during the run is taken when the run would end, in the same run", async () => {
    const reply = call("agentSession/echo-follow/prompt", { text: "echo-follow" });
    await shared.worker.executions(shared.worker.executed.length + 1);
    await call("agentSession/echo-follow/followUp", { text: "and then" });
    const response = (await reply) as { messages: AgentMessage[] };
    const answers = response.messages.filter((message) => message.role === "assistant").map((message) => finalText([message]));
    expect(answers).toEqual(["", "heard: echo-follow", "heard: echo-follow|and then"]);
  });

  it("R90: a malformed request is a terminal error naming what is wrong, and the session is untouched", async () => {
    await expect(call("agentSession/bad/prompt", { nope: 1 })).rejects.toThrow(/prompt: give `text` or `messages`/);
    await expect(call("agentSessionInbox/bad/push", { queue: "later", text: "x" })).rejects.toThrow(/queue must be \\"steer\\" or \\"followUp\\"/);
    expect(await call("agentSession/bad/state", null)).toEqual({ messages: [], running: false, lastEventId: 0, pendingApprovals: [] });
  });

  it("R90, R52: a run that cannot start (messages not a list; continue from an assistant tail) is a terminal error, and the worker serves on", async () => {
    await expect(call("agentSession/poison/prompt", { messages: "oops" })).rejects.toThrow(/cannot start: .*prompts/);
    await expect(call("agentSession/no-tail/continue", null)).rejects.toThrow(/cannot start: Cannot continue: no messages in context/);
    const done = (await call("agentSession/tail/prompt", { text: "echo-tail" })) as { messages: AgentMessage[] };
    await expect(call("agentSession/tail/continue", null)).rejects.toThrow(/cannot start: Cannot continue from message role: assistant/);
    // The same worker still answers, and the session kept its transcript.
    const state = (await call("agentSession/tail/state", null)) as { messages: AgentMessage[]; running: boolean };
    expect(state).toMatchObject({ messages: done.messages, running: false });
  });
});

describe("R90, R82: approvals as awakeables, across worker restarts", () => {
  const pendingOf = async (key: string) => {
    // The wait is written to the object's state by the run; read it until it is there.
    for (;;) {
      const { pendingApprovals } = (await call(`agentSession/${key}/state`, null)) as { pendingApprovals: { approvalId: string; toolName: string }[] };
      if (pendingApprovals.length) return pendingApprovals;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it("R82, R81: a call waits for approval; every worker stops; a new worker starts; approve through the ingress runs that call once and no sibling again", async () => {
    const port = await freePort();
    const first = await startWorker(port);
    await server.registerDeployment(`http://127.0.0.1:${port}`);
    const key = "approve-restart";
    const reply = call(`agentSession/${key}/prompt`, { text: key }, { "idempotency-key": key });
    const [pending] = await pendingOf(key);
    expect(pending).toMatchObject({ toolName: "guarded", reason: "Tool guarded requires approval" });
    // The siblings finish (their ends are in the object's event log, so their outcomes are journaled).
    for (;;) {
      const { events } = (await call(`agentSession/${key}/events`, { limit: 10_000 })) as { events: { event: { type: string } }[] };
      if (events.filter((entry) => entry.event.type === "tool_execution_end").length === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await first.kill();
    // No worker is up: Restate holds the invocation (retrying), the wait is in its journal.
    await server.waitForInvocationStatus(`agentSession/${key}/prompt`, ["backing-off", "suspended"]);
    const second = await startWorker(port);
    try {
      expect(await call(`agentSession/${key}/approve`, { approvalId: pending.approvalId })).toEqual({ approved: pending.approvalId });
      const response = (await reply) as { messages: AgentMessage[] };
      expect(results(response.messages).map((message) => [message.toolCallId, message.isError])).toEqual([
        [`${key}:t0-0`, false],
        [`${key}:t0-1`, false],
        [`${key}:t0-2`, false],
      ]);
      expect(first.executed.sort()).toEqual([`${key}:t0-0`, `${key}:t0-2`]);
      expect(second.executed).toEqual([`${key}:t0-1`]);
      expect(((await call(`agentSession/${key}/state`, null)) as { pendingApprovals: unknown[] }).pendingApprovals).toEqual([]);
      // R82: a settled id is refused.
      await expect(call(`agentSession/${key}/approve`, { approvalId: pending.approvalId })).rejects.toThrow(/no call waits for it/);
      // R83 across workers: the run that waited across the restart replays offline, its decision a record.
      const { records } = await expectOfflineReplay(key);
      expect(records.filter((entry) => (entry.record as { input?: string }).input === "decision").map((entry) => entry.record)).toMatchObject([
        { k: "input", input: "decision", event: { type: "approval.approve", approvalId: pending.approvalId } },
      ]);
    } finally {
      await second.kill();
    }
  }, 60_000);

  it("R82: `always` on approve holds for the session's later runs; each run's approval ids are its own", async () => {
    await withWorker({}, async (worker) => {
      const key = "always-allow";
      const first = call(`agentSession/${key}/prompt`, { text: key });
      const [pending] = await pendingOf(key);
      expect(pending.approvalId).toBe("approval-1-1");
      await expect(call(`agentSession/${key}/approve`, { approvalId: pending.approvalId, always: "yes" })).rejects.toThrow(/`always` must be true or \{ path: string \}/);
      await call(`agentSession/${key}/approve`, { approvalId: pending.approvalId, always: true });
      await first;
      // The second run asks nobody: the rule came with the session.
      const second = (await call(`agentSession/${key}/prompt`, { text: "again" })) as { messages: AgentMessage[]; lastEventId: number };
      expect(results(second.messages).map((message) => [message.toolCallId, message.isError])).toEqual([[`${key}:p2`, false]]);
      expect(worker.executed).toEqual([`${key}:p1`, `${key}:p2`]);
      const { events } = (await call(`agentSession/${key}/events`, { limit: 10_000 })) as { events: { event: { type: string } }[] };
      expect(events.filter((entry) => entry.event.type === "tool_approval_requested")).toHaveLength(1);
      await expectOfflineReplay(key);
    });
  }, 60_000);

  it("R82: reject gives the waiting call an error result with the reason; an unknown id is refused", async () => {
    await withWorker({}, async (worker) => {
      const key = "approve-reject";
      const reply = call(`agentSession/${key}/prompt`, { text: key });
      const [pending] = await pendingOf(key);
      await expect(call(`agentSession/${key}/approve`, { approvalId: "approval-99" })).rejects.toThrow(/no call waits for it/);
      await call(`agentSession/${key}/reject`, { approvalId: pending.approvalId, reason: "not today" });
      const response = (await reply) as { messages: AgentMessage[] };
      const rejected = results(response.messages).find((message) => message.toolCallId === `${key}:t0-1`)!;
      expect(rejected.isError).toBe(true);
      expect(rejected.content).toEqual([{ type: "text", text: "not today" }]);
      expect(worker.executed).not.toContain(`${key}:t0-1`);
    });
  }, 60_000);

  it("R82: approve and reject racing on one call: exactly one is taken, the other is refused, and the call's outcome is the one taken", async () => {
    await withWorker({}, async (worker) => {
      // ("approve…" sessions wait on their middle call, see fixtures/session-script.ts.)
      for (const key of ["approve-race-1", "approve-race-2", "approve-race-3"]) {
        const reply = call(`agentSession/${key}/prompt`, { text: key });
        const [pending] = await pendingOf(key);
        const [approved, rejected] = await Promise.allSettled([
          call(`agentSession/${key}/approve`, { approvalId: pending.approvalId }),
          call(`agentSession/${key}/reject`, { approvalId: pending.approvalId, reason: "NO" }),
        ]);
        expect([approved.status, rejected.status].sort(), key).toEqual(["fulfilled", "rejected"]);
        const refused = (approved.status === "rejected" ? approved : rejected) as PromiseRejectedResult;
        expect(String(refused.reason), key).toMatch(/already decided/);
        const response = (await reply) as { messages: AgentMessage[] };
        const outcome = results(response.messages).find((message) => message.toolCallId === `${key}:t0-1`)!;
        if (approved.status === "fulfilled") expect(worker.executed, key).toContain(`${key}:t0-1`);
        else {
          expect(outcome.content, key).toEqual([{ type: "text", text: "NO" }]);
          expect(worker.executed, key).not.toContain(`${key}:t0-1`);
        }
      }
      // The decisions are forgotten once their runs ended: the inboxes' state does not grow per approval.
      const decided = async () => {
        const response = await fetch(`${server.adminUrl}/query`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify({ query: "SELECT key FROM state WHERE service_name = 'agentSessionInbox' AND key LIKE 'decided:%'" }),
        });
        return ((await response.json()) as { rows: unknown[] }).rows.length;
      };
      await vi.waitFor(async () => expect(await decided()).toBe(0), { timeout: 10_000 });
    });
  }, 120_000);

  it("R82: `always: {path: \"\"}` is refused as the Agent refuses it; R83: a page cursor that is not a whole number is refused", async () => {
    await withWorker({}, async () => {
      const key = "approve-always-empty";
      const reply = call(`agentSession/${key}/prompt`, { text: key });
      const [pending] = await pendingOf(key);
      await expect(call(`agentSession/${key}/approve`, { approvalId: pending.approvalId, always: { path: "" } })).rejects.toThrow(/always` must be true or/);
      await call(`agentSession/${key}/reject`, { approvalId: pending.approvalId, reason: "no" });
      await reply;
      await expect(call(`agentSession/${key}/events`, { after: "abc" })).rejects.toThrow(/`after` must be a whole number/);
      await expect(call(`agentSession/${key}/journal`, { after: 0, limit: "x" })).rejects.toThrow(/`limit` must be a whole number/);
    });
  }, 60_000);
});

describe("R90: abort through the ingress", () => {
  const shared = blockWorker({ TOOL_MS: "60000" });

  it("R90, R29: `abort` (a shared handler, not queued behind the run) ends the running run aborted; its calls get their results", async () => {
    const reply = call("agentSession/aborted/prompt", { text: "go" });
    await shared.worker.executions(3);
    expect(await call("agentSession/aborted/abort", null)).toEqual({ aborted: true });
    const response = (await reply) as { messages: AgentMessage[]; lastEventId: number };
    const last = response.messages.at(-1)!;
    expect(last.role === "assistant" && last.stopReason).toBe("aborted");
    expect(results(response.messages)).toHaveLength(3);
    const { events } = (await call("agentSession/aborted/events", { limit: 10_000 })) as { events: { event: { type: string; reason?: string } }[] };
    expect(events.at(-1)!.event).toMatchObject({ type: "agent_end", reason: "aborted" });
    expect(((await call("agentSession/aborted/state", null)) as { running: boolean }).running).toBe(false);
    // Nothing to abort now.
    expect(await call("agentSession/aborted/abort", null)).toEqual({ aborted: false });
    // R83: the abort is a record of the journal, which replays to the same events.
    const { records } = await expectOfflineReplay("aborted");
    expect(records.filter((entry) => (entry.record as { input?: string }).input === "abort")).toHaveLength(1);
  });
});

describe("R90, R67: the abort grace on Restate (a journaled timer)", () => {
  const shared = blockWorker({ TOOL_MS: "60000", IGNORE_ABORT: "1", GRACE_MS: "300" });

  it("R67, R90: tools that ignore the abort are abandoned when the grace runs out; the run ends aborted and its journal replays offline", async () => {
    const reply = call("agentSession/graced/prompt", { text: "graced" });
    await shared.worker.executions(3);
    const abortedAt = Date.now();
    expect(await call("agentSession/graced/abort", null)).toEqual({ aborted: true });
    const response = (await reply) as { messages: AgentMessage[] };
    // Ended by the grace, not by the tools' 60 s.
    expect(Date.now() - abortedAt).toBeLessThan(30_000);
    const abandoned = results(response.messages);
    expect(abandoned).toHaveLength(3);
    for (const message of abandoned) expect(message.content).toEqual([{ type: "text", text: "Operation aborted (the tool did not stop within 300 ms)" }]);
    const { events } = (await call("agentSession/graced/events", { limit: 10_000 })) as { events: { event: { type: string; reason?: string } }[] };
    expect(events.at(-1)!.event).toMatchObject({ type: "agent_end", reason: "aborted" });
    const { records } = await expectOfflineReplay("graced");
    expect(records.filter((entry) => (entry.record as { input?: string }).input === "grace")).toHaveLength(1);
    // The session takes a new prompt (the abandoned steps do not hold it).
    expect(((await call("agentSession/graced/state", null)) as { running: boolean }).running).toBe(false);
  }, 60_000);

  it("R67, R81: the worker dies during the grace; the next one ends the run aborted, runs no tool again, and the journal replays", async () => {
    const port = await freePort();
    const env = { TOOL_MS: "60000", IGNORE_ABORT: "1", GRACE_MS: "300" };
    const first = await startWorker(port, env);
    await server.registerDeployment(`http://127.0.0.1:${port}`);
    const reply = call("agentSession/graced-crash/prompt", { text: "graced-crash" }, { "idempotency-key": "graced-crash" });
    await first.executions(3);
    expect(await call("agentSession/graced-crash/abort", null)).toEqual({ aborted: true });
    await first.kill();
    const second = await startWorker(port, env);
    try {
      const response = (await reply) as { messages: AgentMessage[] };
      const last = response.messages.at(-1)!;
      expect(last.role === "assistant" && last.stopReason).toBe("aborted");
      const settled = results(response.messages);
      expect(settled).toHaveLength(3);
      for (const message of settled) expect(message.isError).toBe(true);
      expect(second.executed).toEqual([]);
      await expectOfflineReplay("graced-crash");
    } finally {
      await second.kill();
    }
  }, 60_000);
});

describe("R90, R70: tools that start while the model streams, on Restate", () => {
  const env = { STREAMING: "1", STREAM_PAUSE_MS: "150" };

  it("R70, R90: calls start while their response still streams; the session completes and its journal replays offline", async () => {
    await withWorker(env, async (worker) => {
      const key = "streamed";
      const response = (await call(`agentSession/${key}/prompt`, { text: key })) as { messages: AgentMessage[] };
      expectCompletedSession(response.messages);
      expect(shape(response.messages)).toEqual(uninterrupted(key, new Set()));
      const { events } = (await call(`agentSession/${key}/events`, { limit: 100_000 })) as { events: { event: { type: string; toolCallId?: string; message?: { role: string } } }[] };
      // In every turn the first call started before its response's message_end (R70).
      for (let turn = 0; turn < 5; turn++) {
        const start = events.findIndex((entry) => entry.event.type === "tool_execution_start" && entry.event.toolCallId === `${key}:t${turn}-0`);
        const ends = events.map((entry, i) => (entry.event.type === "message_end" && entry.event.message?.role === "assistant" ? i : -1)).filter((i) => i >= 0);
        expect(start, `turn ${turn}`).toBeGreaterThan(-1);
        expect(start, `turn ${turn}`).toBeLessThan(ends[turn]);
      }
      expect(new Set(worker.executed).size).toBe(15);
      await expectOfflineReplay(key);
    });
  }, 60_000);

  for (const [i, point] of [{ kind: "executions", at: 4 } as const, { kind: "ms", at: 700 } as const].entries()) {
    const where = point.kind === "executions" ? `after ${point.at} tool executions` : `${point.at} ms into the run`;
    it(`R70, R81: streamed calls, the worker killed ${where}: the session completes, no tool twice, and the journal replays offline`, async () => {
      const key = `streamed-crash-${i}`;
      const { first, second, reply } = await killMidRun(key, point, env);
      try {
        const response = (await reply) as { messages: AgentMessage[] };
        expectCompletedSession(response.messages);
        const interruptedIds = new Set(results(response.messages).filter((message) => message.isError).map((message) => message.toolCallId));
        expect(shape(response.messages)).toEqual(uninterrupted(key, interruptedIds));
        const executed = [...first.executed, ...second.executed];
        expect(executed.length).toBe(new Set(executed).size);
        for (const id of interruptedIds) expect(second.executed).not.toContain(id);
        await expectOfflineReplay(key);
      } finally {
        await second.kill();
      }
    }, 60_000);
  }
});

describe("R90: several workers behind one server", () => {
  it("R90: ten sessions over two workers; one worker dies mid-run and its sessions finish on the other, no tool twice", async () => {
    const a = await startWorker(await freePort());
    const b = await startWorker(await freePort());
    let alive = [a.port, b.port];
    const balancer = await startBalancer(() => alive);
    try {
      await server.registerDeployment(`http://127.0.0.1:${balancer.port}`);
      const replies = Array.from({ length: 10 }, (_, i) => call(`agentSession/pool-${i}/prompt`, { text: `pool-${i}` }, { "idempotency-key": `pool-${i}` }));
      await a.executions(20);
      alive = [b.port];
      await a.kill();
      const responses = (await Promise.all(replies)) as { messages: AgentMessage[] }[];
      for (const response of responses) expectCompletedSession(response.messages);
      // Both workers served, and the survivor finished what the dead one had started.
      expect(a.executed.length).toBeGreaterThan(0);
      expect(b.executed.length).toBeGreaterThan(0);
      const executed = [...a.executed, ...b.executed];
      expect(executed.length).toBe(new Set(executed).size);
    } finally {
      await balancer.close();
      await Promise.all([a.kill(), b.kill()]);
    }
  }, 90_000);
});

describe("R90, R81: a worker killed mid-run is replaced, and the run continues from the journal", () => {
  // Seeded kill points, half by the count of tool executions the worker reported, half by wall
  // time since the prompt; CRASH_SEED replays a failure, RESTATE_CRASH_POINTS sets how many.
  const seed = Number(process.env.CRASH_SEED ?? 20261201);
  const random = seededRandom(seed);
  const points = Array.from({ length: Number(process.env.RESTATE_CRASH_POINTS ?? 3) }, (_, i) =>
    i % 2 === 0 ? ({ kind: "executions", at: 1 + Math.floor(random() * 14) } as const) : ({ kind: "ms", at: 50 + Math.floor(random() * 900) } as const),
  );
  const tally = { runs: 0, interrupted: 0, completed: 0 };
  afterAll(() => console.log(`restate crash tally (seed ${seed}): ${tally.completed}/${tally.runs} sessions completed, ${tally.interrupted} calls interrupted`));

  for (const [i, point] of points.entries()) {
    const where = point.kind === "executions" ? `after ${point.at} tool executions` : `${point.at} ms into the run`;
    // Every other point with tools that start while the model streams (R70), its responses paused between calls.
    const streaming = i % 2 === 1;
    const env: Record<string, string> = streaming ? { STREAMING: "1", STREAM_PAUSE_MS: "60" } : {};
    it(`R81: killed ${where}${streaming ? ", calls streamed" : ""} (seed ${seed}, #${i}): the session completes, each call has one result, no tool ran twice, no event twice`, async () => {
      tally.runs++;
      const key = `crash-${seed}-${i}`;
      const { first, second, reply } = await killMidRun(key, point, env);
      try {
        const response = (await reply) as { messages: AgentMessage[]; lastEventId: number };
        expectCompletedSession(response.messages);
        const interruptedIds = new Set(results(response.messages).filter((message) => message.isError).map((message) => message.toolCallId));
        expect(shape(response.messages)).toEqual(uninterrupted(key, interruptedIds));
        // R13 across workers: a call in flight at the kill is not run again (`work` is not replay-safe).
        const executed = [...first.executed, ...second.executed];
        expect(executed.length).toBe(new Set(executed).size);
        const interrupted = results(response.messages).filter((message) => message.isError);
        tally.interrupted += interrupted.length;
        // Only calls of the batch in flight at the kill can be interrupted (a call whose intent was
        // journaled counts as started: its execution may have begun), and none ran on the second worker.
        expect(interrupted.length).toBeLessThanOrEqual(3);
        for (const message of interrupted) {
          expect(message.content).toEqual([{ type: "text", text: `Tool work was interrupted before it finished; its outcome is unknown, so it was not run again.` }]);
          expect(second.executed).not.toContain(message.toolCallId);
        }
        // Every call not interrupted ran exactly once, on one of the two workers.
        const succeeded = results(response.messages).filter((message) => !message.isError).map((message) => message.toolCallId);
        for (const id of succeeded) expect(executed.filter((e) => e === id)).toHaveLength(1);
        // R81: the event log holds each event once: one run, one end per call, ids without gaps.
        const { events } = (await call(`agentSession/${key}/events`, { limit: 100_000 })) as { events: { id: number; event: { type: string; toolCallId?: string } }[] };
        expect(events.map((entry) => entry.id)).toEqual(Array.from({ length: response.lastEventId }, (_, n) => n + 1));
        expect(events.filter((entry) => entry.event.type === "agent_start")).toHaveLength(1);
        const ends = events.filter((entry) => entry.event.type === "tool_execution_end").map((entry) => entry.event.toolCallId);
        expect(ends).toHaveLength(15);
        expect(new Set(ends).size).toBe(15);
        // R83 across workers: the journal both workers wrote replays offline to that event log.
        const { runs } = await expectOfflineReplay(key);
        expect(runs.map((run) => run.messages)).toEqual([response.messages]);
        tally.completed++;
      } finally {
        await second.kill();
      }
    }, 60_000);
  }
});

