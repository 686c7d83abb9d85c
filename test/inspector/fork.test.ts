/**
 * Time travel without a browser: the restore suite's scenario A (test/restore/scenario.ts) recorded
 * into a durable session, then forked from every persisted point of its journal: each fork is a new
 * session that finishes, the original is never written, and a fork with an edited response differs
 * from the original exactly at that response.
 */
import { afterEach, describe, expect, it } from "vitest";
import { runAgentLoop, type AgentMessage, type StreamFn } from "../../src/index.js";
import { resumeAgentLoop } from "../../src/durable/resume.js";
import { createLiveInspector, type ForkSource, type LiveInspector, type WireMessage } from "../../src/inspector/index.js";
import type { Json, RunStore } from "../../src/store/run-store.js";
import { fixedClock, newWorld, scenarioInput, scenarioOptions } from "../restore/scenario.js";
import { memoryRunStore } from "../support/memory-run-store.js";

let inspector: LiveInspector | undefined;
afterEach(async () => {
  await inspector?.close();
  inspector = undefined;
});

/** Scenario A, journaled into session "a". */
async function recordScenarioA() {
  const store = memoryRunStore();
  const options = scenarioOptions(newWorld());
  const input = scenarioInput();
  const messages = await runAgentLoop(input.prompts, { messages: [], tools: [...(options.tools ?? [])] }, options.config, () => {}, undefined, options.streamFn, {
    durable: { store, sessionId: "a" },
    clock: fixedClock,
  });
  return { store, messages };
}

/** The app's implementations in the inspector process: scenario A's tools, hooks and model. */
function scenarioSource(store: RunStore): ForkSource {
  return {
    store,
    sessionId: "a",
    run: async (fork) => {
      // The app's queues were delivered in the original; a fork asks them again and finds them empty.
      const options = scenarioOptions({ ...newWorld(), steered: true, followedUp: true });
      const result = await resumeAgentLoop(fork.durable, {
        config: options.config,
        tools: fork.tools(options.tools ?? []),
        streamFn: fork.streamFn(options.streamFn),
        sink: () => {},
        clock: fixedClock,
        inspect: fork.inspect,
      });
      expect(result.resumed).toBe(true);
    },
  };
}

const recordsOf = (store: RunStore, session: string): Json[] => store.readSession(session).records().map((entry) => entry.record);
const compareOf = (messages: WireMessage[], fork: string) => messages.find((m): m is Extract<WireMessage, { t: "compare" }> => m.t === "compare" && m.s === fork);

describe("time travel: fork a durable session from a persisted point", () => {
  it("R13, R81: a fork from every persisted point of scenario A finishes in a new session; the original is only read", { timeout: 120_000 }, async () => {
    const { store, messages } = await recordScenarioA();
    const original = JSON.stringify(recordsOf(store, "a"));
    const approved: string[] = [];
    inspector = await createLiveInspector({
      port: 0,
      // The page's part: every call of a tool that is not replay-safe asks before it runs again.
      forkApprovals: (request) => (approved.push(request.tool), { approve: true }),
    });
    inspector.addForkSource(scenarioSource(store));
    const points = inspector.forkPoints("a");
    // Every record of the run but the last (the `end`) leaves something to run.
    expect(points.length).toBe(recordsOf(store, "a").length - 1);
    expect(points.filter((point) => point.beforeResponse).map((point) => point.label)).toEqual(["before request 1", "before request 2", "before request 3", "before request 4"]);

    for (const point of points) {
      const fork = inspector.fork({ session: "a", seq: point.seq });
      await fork.done;
      const records = recordsOf(store, fork.sessionId);
      expect(records.at(-1), `${point.label} (${point.seq})`).toMatchObject({ k: "end" });
      // Nothing before the point is made again: the fork starts with the original's records.
      expect(records.slice(0, point.seq)).toEqual(recordsOf(store, "a").slice(0, point.seq));
      const { messages: forkMessages } = (records.at(-1) as unknown as { messages: AgentMessage[] });
      expect(forkMessages.length, point.label).toBeGreaterThan(0);
    }
    expect(store.listSessions()).toHaveLength(points.length + 1);
    expect(JSON.stringify(recordsOf(store, "a"))).toBe(original);
    // Only the tools that are not replay-safe asked (the write and the sub-agent), never the reads.
    expect(new Set(approved)).toEqual(new Set(["write", "delegate"]));
    expect(messages.length).toBeGreaterThan(0);
  });

  it("a fork before the second request with an edited response differs from the original exactly there", async () => {
    const { store } = await recordScenarioA();
    inspector = await createLiveInspector({ port: 0 });
    inspector.addForkSource(scenarioSource(store));
    const point = inspector.forkPoints("a").find((candidate) => candidate.beforeResponse?.request === 2)!;
    // The recorded second response: a sequential write and a sub-agent call.
    expect(point.beforeResponse).toEqual({
      request: 2,
      text: "",
      calls: [
        { name: "write", arguments: { path: "out", text: "x" }, id: "c5" },
        { name: "delegate", arguments: { task: "sum" }, id: "c6" },
      ],
    });
    const fork = inspector.fork({ session: "a", seq: point.seq, edit: { text: "Nothing to write after all.", keepCalls: false } });
    await fork.done;
    const compare = compareOf(inspector.messages(), fork.sessionId)!;
    const assistants = compare.original.flatMap((line, i) => (line.role === "assistant" ? [i] : []));
    expect(compare.diverge).toBe(assistants[1]);
    expect(compare.fork.slice(0, compare.diverge!)).toEqual(compare.original.slice(0, compare.diverge!));
    expect(compare.fork[compare.diverge!]).toEqual({ role: "assistant", text: "Nothing to write after all." });
    expect(compare.original[compare.diverge!]).toEqual({ role: "assistant", text: '[write {"path":"out","text":"x"}] [delegate {"task":"sum"}]' });
    // The page learnt of the fork on the original's channel.
    expect(inspector.messages().filter((m) => m.t === "fork")).toEqual([{ t: "fork", s: "a", fork: fork.sessionId, seq: point.seq, label: "before request 2", edited: true }]);
  });

  it("a recording without the app's model: the fork's later requests get the recorded responses (the edited one skipped)", async () => {
    const { store } = await recordScenarioA();
    inspector = await createLiveInspector({ port: 0, forkApprovals: () => ({ approve: true }) });
    inspector.addForkSource({
      ...scenarioSource(store),
      run: async (fork) => {
        // The app's tools and hooks, but no model: the recording stands in for it.
        const options = scenarioOptions({ ...newWorld(), steered: true });
        await resumeAgentLoop(fork.durable, { config: options.config, tools: fork.tools(options.tools ?? []), streamFn: fork.streamFn(), sink: () => {}, clock: fixedClock, inspect: fork.inspect });
      },
    });
    const point = inspector.forkPoints("a").find((candidate) => candidate.beforeResponse?.request === 2)!;
    const same = inspector.fork({ session: "a", seq: point.seq });
    await same.done;
    expect(compareOf(inspector.messages(), same.sessionId)!.diverge).toBeNull();

    const edited = inspector.fork({ session: "a", seq: point.seq, edit: { text: "Writing and delegating." } });
    await edited.done;
    const compare = compareOf(inspector.messages(), edited.sessionId)!;
    // Only the edited response differs: its calls were kept, and the requests after it got responses 3 and 4.
    const differing = compare.original.flatMap((line, i) => (JSON.stringify(line) === JSON.stringify(compare.fork[i]) ? [] : [i]));
    expect(differing).toEqual([compare.diverge]);
    expect(compare.fork).toHaveLength(compare.original.length);
    expect(compare.fork[compare.diverge!].text).toBe('Writing and delegating. [write {"path":"out","text":"x"}] [delegate {"task":"sum"}]');
  });

  it("a fork that calls a paid model waits for a confirmation in the page before its first request; refused, the model is never called", async () => {
    const { store } = await recordScenarioA();
    const requests: string[] = [];
    inspector = await createLiveInspector({ port: 0 });
    inspector.addForkSource({
      ...scenarioSource(store),
      paidModel: "claude-paid",
      run: async (fork) => {
        const options = scenarioOptions({ ...newWorld(), steered: true, followedUp: true });
        const paid: StreamFn = (model, context, streamOptions) => (requests.push(fork.sessionId), options.streamFn!(model, context, streamOptions));
        await resumeAgentLoop(fork.durable, { config: options.config, tools: [...(options.tools ?? [])], streamFn: fork.streamFn(paid), sink: () => {}, clock: fixedClock, inspect: fork.inspect });
      },
    });
    expect((await (await fetch(new URL("/points?session=a", inspector.url))).json()) as { paidModel: string }).toMatchObject({ paidModel: "claude-paid" });
    const point = inspector.forkPoints("a").find((candidate) => candidate.beforeResponse?.request === 2)!;

    const refused = inspector.fork({ session: "a", seq: point.seq });
    const asked = await untilMessage(inspector, (m) => m.t === "approval" && m.s === refused.sessionId && m.state === "waiting");
    expect(asked).toEqual({ t: "approval", s: refused.sessionId, id: "paid-model", tool: "paid model", args: { model: "claude-paid" }, state: "waiting" });
    expect(requests).toEqual([]);
    expect(inspector.decide(refused.sessionId, "paid-model", { approve: false, reason: "too dear" })).toBe(true);
    await refused.done;
    expect(requests).toEqual([]);
    const last = (recordsOf(store, refused.sessionId).at(-1) as unknown as { messages: AgentMessage[] }).messages.at(-1) as { stopReason?: string; errorMessage?: string };
    expect(last).toMatchObject({ stopReason: "error", errorMessage: "Not sent to the paid model: too dear" });

    // Confirmed, the fork's requests go to the model (an edited first response is free: the ask comes after it).
    const approved = inspector.fork({ session: "a", seq: point.seq, edit: { text: "Writing and delegating." } });
    const second = await untilMessage(inspector, (m) => m.t === "approval" && m.s === approved.sessionId && m.state === "waiting");
    expect(second).toMatchObject({ id: "paid-model" });
    expect(requests).toEqual([]);
    inspector.decide(approved.sessionId, "paid-model", { approve: true });
    await approved.done;
    expect(requests.length).toBeGreaterThan(0);
    expect(new Set(requests)).toEqual(new Set([approved.sessionId]));
    expect(inspector.messages().filter((m) => m.t === "approval" && m.id === "paid-model").map((m) => [m.s, (m as { state: string }).state])).toEqual([
      [refused.sessionId, "waiting"],
      [refused.sessionId, "rejected"],
      [approved.sessionId, "waiting"],
      [approved.sessionId, "approved"],
    ]);
  });

  it("the page's actions: a fork and an approval by POST need the page's token; bad input is a 400", async () => {
    const { store } = await recordScenarioA();
    inspector = await createLiveInspector({ port: 0 });
    inspector.addForkSource(scenarioSource(store));
    const page = await (await fetch(inspector.url)).text();
    const token = /name="inspector-token" content="([^"]+)"/.exec(page)![1];
    const post = (path: string, body: unknown, headers: Record<string, string> = { "x-inspector-token": token, "content-type": "application/json" }) =>
      fetch(new URL(path, inspector!.url), { method: "POST", headers, body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: await r.text() }));
    const point = inspector.forkPoints("a").find((candidate) => candidate.beforeResponse?.request === 2)!;
    // Another site's page can send a simple POST (no custom header, a form's content type): refused.
    expect((await post("/fork", { session: "a", seq: point.seq }, { "content-type": "text/plain" })).status).toBe(403);
    expect((await post("/fork", { session: "a", seq: point.seq }, { "x-inspector-token": "wrong", "content-type": "application/json" })).status).toBe(403);
    expect(await post("/fork", { session: "nope", seq: 1 })).toEqual({ status: 400, body: JSON.stringify({ error: 'session "nope" cannot be forked (not a durable session the inspector was given)' }) });
    expect(await post("/fork", { session: "a", seq: "x" })).toEqual({ status: 400, body: JSON.stringify({ error: "expected { session, seq, edit? }" }) });
    expect((await post("/approval", { session: "a", id: "x", approve: true })).status).toBe(400);
    // The write of the second response asks in the page; the page approves it by POST.
    const started = await post("/fork", { session: "a", seq: point.seq });
    expect(started.status).toBe(200);
    const forkId = (JSON.parse(started.body) as { fork: string }).fork;
    const waiting = await untilMessage(inspector, (m) => m.t === "approval" && m.s === forkId && m.state === "waiting");
    expect(waiting).toMatchObject({ tool: "write", args: { path: "out", text: "x" } });
    expect(await post("/approval", { session: forkId, id: (waiting as { id: string }).id, approve: true })).toEqual({ status: 200, body: '{"ok":true}' });
    const second = await untilMessage(inspector, (m) => m.t === "approval" && m.s === forkId && m.state === "waiting" && m.tool === "delegate");
    expect(await post("/approval", { session: forkId, id: (second as { id: string }).id, approve: false, reason: "not now" })).toEqual({ status: 200, body: '{"ok":true}' });
    const compare = await untilMessage(inspector, (m) => m.t === "compare" && m.s === forkId);
    expect(compare).toMatchObject({ t: "compare", of: "a" });
    const results = (compare as Extract<WireMessage, { t: "compare" }>).fork.filter((line) => line.role === "toolResult").map((line) => line.text);
    expect(results).toContain("Rejected in the inspector: not now");
  });
});

/** The page's token, read from the page as the page's script does. */
async function pageToken(inspector: LiveInspector): Promise<string> {
  const page = await (await fetch(inspector.url)).text();
  return /name="inspector-token" content="([^"]+)"/.exec(page)![1]!;
}

/** A source whose runner is never reached (these tests ask before any fork runs). */
const idleSource = (store: RunStore, sessionId: string): ForkSource => ({ store, sessionId, run: async () => {} });

describe("time travel: no request to the page's server can crash the host", () => {
  it("a session made forkable before it is stored (the CLI before its first prompt) has no points; a fork of it is a 400 with the reason", async () => {
    inspector = await createLiveInspector({ port: 0 });
    inspector.addForkSource(idleSource(memoryRunStore(), "s1"));
    const token = await pageToken(inspector);
    expect(inspector.forkPoints("s1")).toEqual([]);
    const points = await fetch(new URL("/points?session=s1", inspector.url));
    expect({ status: points.status, body: await points.json() }).toEqual({ status: 200, body: { points: [] } });
    const fork = await fetch(new URL("/fork", inspector.url), { method: "POST", headers: { "x-inspector-token": token, "content-type": "application/json" }, body: JSON.stringify({ session: "s1", seq: 1 }) });
    expect({ status: fork.status, body: await fork.json() }).toEqual({ status: 400, body: { error: "session s1 has no fork point at record 1" } });
  });

  it("a store that fails while the page asks is a 500 with the reason, for a GET and a POST alike", async () => {
    const store = memoryRunStore();
    const broken: RunStore = { ...store, hasSession: () => true, readSession: () => { throw new Error("disk on fire"); } };
    inspector = await createLiveInspector({ port: 0 });
    inspector.addForkSource(idleSource(broken, "s1"));
    const token = await pageToken(inspector);
    const points = await fetch(new URL("/points?session=s1", inspector.url));
    expect({ status: points.status, body: await points.json() }).toEqual({ status: 500, body: { error: "Error: disk on fire" } });
    const fork = await fetch(new URL("/fork", inspector.url), { method: "POST", headers: { "x-inspector-token": token, "content-type": "application/json" }, body: JSON.stringify({ session: "s1", seq: 1 }) });
    expect({ status: fork.status, body: await fork.json() }).toEqual({ status: 500, body: { error: "Error: disk on fire" } });
    // Still serving.
    expect((await fetch(inspector.url)).status).toBe(200);
  });

  it("a body over 256 KB is answered 413 with the reason (not a reset connection), then the server goes on", async () => {
    inspector = await createLiveInspector({ port: 0 });
    const token = await pageToken(inspector);
    for (const size of [300 * 1024, 8 * 1024 * 1024]) {
      const response = await fetch(new URL("/fork", inspector.url), { method: "POST", headers: { "x-inspector-token": token, "content-type": "application/json" }, body: "x".repeat(size) });
      expect({ status: response.status, body: await response.json() }).toEqual({ status: 413, body: { error: "the body is larger than 256 KB" } });
    }
    expect((await fetch(inspector.url)).status).toBe(200);
  });
});

/** Waits for the inspector to have sent a message (read through its SSE channel, as the page does). */
async function untilMessage(inspector: LiveInspector, test: (m: WireMessage) => boolean): Promise<WireMessage> {
  const response = await fetch(new URL("/events", inspector.url));
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the channel closed");
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const found = (JSON.parse(frame.replace(/^(event: \w+\n)?data: /, "")) as WireMessage[]).find(test);
      if (found) {
        await reader.cancel();
        return found;
      }
    }
  }
}
