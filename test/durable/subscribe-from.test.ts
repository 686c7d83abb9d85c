/**
 * R81: `agent.subscribe(listener, { after })` on a durable session that is open and running (another
 * tab, a reconnecting client): the stored events after `after`, then the live ones, each once, in
 * order, with no gap and no duplicate at the seam, whenever the subscriber comes.
 */
import { describe, expect, it } from "vitest";
import type { AgentTool, AgentToolResult, AnyAgentEvent, EventDelivery } from "../../src/index.js";
import { Agent, scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/index.js";
import { AgentInputError } from "../../src/boundary/errors.js";
import { readSessionEvents } from "../../src/durable/index.js";
import { replayRun } from "../../src/durable/replay.js";
import type { RunStore } from "../../src/store/run-store.js";
import { StoreCorruptError } from "../../src/store/errors.js";
import { memoryRunStore } from "../support/memory-run-store.js";
import { durableEventSource, type SequencedEvent } from "../../src/ui-stream/index.js";
import { fixedClock } from "./crash-scenario.js";

interface Got {
  seq: number;
  json: string;
  provisional: boolean;
}

const ok = (value: string): AgentToolResult => ({ content: [{ type: "text", text: value }], details: { value } });
const tool = (name: string, safe: boolean): AgentTool => ({
  name,
  label: name,
  description: name,
  parameters: { type: "object", properties: { path: { type: "string" } } },
  ...(safe ? { replay: "safe" as const } : {}),
  execute: async (id, params, _signal, onUpdate) => {
    onUpdate?.(ok(`working on ${id}`));
    await Promise.resolve();
    return ok(`${name} ${JSON.stringify(params)}`);
  },
});

/** Three runs: two turns with a parallel batch, a turn with one call, an answer; every text streams in small deltas. */
const script = scriptedStreamFn(({ context }) => {
  const turn = context.messages.filter((message) => message.role === "assistant").length;
  const answers = [
    { content: [text("Reading both files now."), toolCall("read", { path: "f1" }, "t0-read"), toolCall("write", { path: "f2" }, "t0-write")] },
    { content: [text("Both done, here is the summary.")] },
    { content: [toolCall("read", { path: "f3" }, "t2-read")] },
    { content: [text("Three.")] },
    { content: [text("The end of the story, told slowly.")] },
  ];
  return { ...(answers[turn] ?? { content: [text("?")] }), chunkSize: 4 };
});

function sessionAgent(store: RunStore, sessionId = "s") {
  return new Agent({ streamFn: script, initialState: { model: scriptedModel, tools: [tool("read", true), tool("write", false)] }, clock: fixedClock, durable: { store, sessionId } });
}

/** Wall-clock readings (a prompt's and a response's time) differ between the runs compared. */
const timeless = (event: unknown) => JSON.stringify(event, (key, v) => (key === "timestamp" || key === "durationMs" ? 0 : v));
const entry = (event: AnyAgentEvent, delivery: EventDelivery | undefined): Got => ({ seq: delivery!.seq, json: timeless(event), provisional: delivery!.provisional });
const prompts = ["one", "two", "three"];

/** The uninterrupted sequence: what a listener subscribed from the session's start gets (the same session: a response's deltas depend on the timing of its listeners). */
function recordAll(agent: Agent): Got[] {
  const got: Got[] = [];
  agent.subscribe((event, _signal, delivery) => void got.push(entry(event, delivery)), { runtimeEvents: true });
  return got;
}

/** A subscriber from `after`, and what the documented rule says it must get from `all`. */
interface Probe {
  label: string;
  after: number;
  runStartAfter: number;
  got: Got[];
  done: Promise<void>;
  unsubscribe: () => void;
}

function probe(agent: Agent, label: string, after: number, last: number): Probe {
  const got: Got[] = [];
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  // Nothing to wait for past the last event (it must get nothing: checked with the rest).
  if (after >= last) finish();
  const runStartAfter = agent.sequence!.runStartAfter;
  const unsubscribe = agent.subscribe(
    (event, _signal, delivery) => {
      got.push(entry(event, delivery));
      if (delivery!.seq === last) finish();
    },
    { after, runtimeEvents: true, onError: (error: unknown) => expect.fail(`${label}: ${String(error)}`) },
  );
  return { label, after, runStartAfter, got, done, unsubscribe };
}

/** The rule: every event above `after`, once, in order, flagged as delivered (stored runs' events too: the flag is the event's). */
const expected = (all: Got[], p: Probe): Got[] => all.filter((e) => e.seq > p.after);

describe("R81: subscribe(listener, { after }) on an open, running durable session", () => {
  it("R81: a subscriber at every sequence number of a multi-turn run with tools (and mid-response), from every kind of `after`, gets exactly the uninterrupted sequence after it", { timeout: 60_000 }, async () => {
    const agent = sessionAgent(memoryRunStore());
    const all = recordAll(agent);
    // Every subscriber waits for the last event of the three runs (89: checked below).
    const last = 89;
    const probes: Probe[] = [];
    // Subscribed from inside a listener, at every event: from the start, from just before it, from
    // it, from a few back (inside a streaming response when it is one), from beyond the head.
    agent.subscribe(
      (event, _signal, delivery) => {
        const k = delivery!.seq;
        const afters = [k - 1, k, Math.max(0, k - 3), k + 2, ...(k % 8 === 0 ? [0, Math.floor(k / 2)] : [])];
        for (const after of new Set(afters)) probes.push(probe(agent, `at ${k} (${event.type}) after ${after}`, after, last));
      },
      { runtimeEvents: true },
    );
    for (const prompt of prompts) {
      // Between runs: the session is open and idle (the last run in memory, the earlier ones stored).
      const head = agent.sequence!.lastSeq;
      probes.push(probe(agent, `idle at ${head} after 0`, 0, last), probe(agent, `idle at ${head} after ${head}`, head, last));
      await agent.prompt(prompt);
    }
    await Promise.all(probes.map((p) => p.done));
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    expect(all.at(-1)!.seq).toBe(last);
    expect(all.some((e) => e.provisional)).toBe(true);
    expect(probes.length).toBeGreaterThan(4 * 80);
    for (const p of probes) expect(p.got, p.label).toEqual(expected(all, p));

    // A fresh Agent on the same store (the session not running): stored events only, then live ones when a run starts.
    agent.release();
    const store = (agent as unknown as { durable: { store: RunStore } }).durable.store;
    const next = sessionAgent(store);
    const fromStore = probe(next, "fresh after 0", 0, last + 1_000);
    const fromMiddle = probe(next, "fresh after 17", 17, last + 1_000);
    expect(next.sequence).toEqual({ lastSeq: last, runStartAfter: last });
    expect(fromStore.got).toEqual([]);
    const four = recordAll(next);
    await next.prompt("four");
    const whole = await replayRun(store.readSession("s").records());
    const stored = whole.slice(0, 3).flatMap((run) => run.events.map((event, i) => ({ seq: run.firstSeq + i, json: timeless(event), provisional: run.provisional[i] })));
    // The replay numbers and flags every event as it was delivered.
    expect(stored).toEqual(all);
    // Stored runs as delivered; the run that went live here comes as its listeners got it.
    for (const p of [fromStore, fromMiddle]) expect(p.got, p.label).toEqual([...stored.filter((e) => e.seq > p.after), ...four]);
    expect(four[0]!.seq).toBe(last + 1);
    next.release();
    // Another process (a viewer): the finished runs, read without the lock.
    expect((await readSessionEvents(store.readSession("s"), { after: 10 })).map((e) => e.delivery.seq)).toEqual([...stored.filter((e) => e.seq > 10), ...four].map((e) => e.seq));
  });

  it("R81: subscribing from inside a subscriber's own catch-up, and unsubscribing mid-catch-up, keep the seam exact", async () => {
    const agent = sessionAgent(memoryRunStore());
    const all = recordAll(agent);
    const last = 89;
    await agent.prompt("one");
    await agent.prompt("two");
    const base = agent.sequence!.lastSeq;
    const nested: Got[] = [];
    const stopped: Got[] = [];
    let unsubscribeStopped = () => {};
    let nestedAfter = -1;
    let nestedRunStart = -1;
    let nestedDone!: () => void;
    const nestedFinished = new Promise<void>((resolve) => (nestedDone = resolve));
    const outer: Got[] = [];
    let outerDone!: () => void;
    const outerFinished = new Promise<void>((resolve) => (outerDone = resolve));
    const run = agent.prompt("three");
    // From the session's start while run three streams: runs one and two come from the store.
    agent.subscribe(
      (event, _signal, delivery) => {
        outer.push(entry(event, delivery));
        if (delivery!.seq === 5) {
          // Inside a listener that is itself still catching up.
          nestedAfter = 5;
          nestedRunStart = agent.sequence!.runStartAfter;
          agent.subscribe(
            (e, _s, d) => {
              nested.push(entry(e, d));
              if (d!.seq === last) nestedDone();
            },
            { after: 5, runtimeEvents: true },
          );
        }
        if (delivery!.seq === last) outerDone();
      },
      { after: 0, runtimeEvents: true },
    );
    unsubscribeStopped = agent.subscribe(
      (event, _signal, delivery) => {
        stopped.push(entry(event, delivery));
        if (stopped.length === 7) unsubscribeStopped();
      },
      { after: 2, runtimeEvents: true },
    );
    await run;
    await Promise.all([outerFinished, nestedFinished]);
    expect(base).toBeGreaterThan(0);
    expect(nestedRunStart).toBe(base);
    expect(outer).toEqual(all);
    expect(nested).toEqual(all.filter((e) => e.seq > nestedAfter));
    // Unsubscribed from inside its 7th event, while still catching up from the store: nothing more.
    expect(stopped.map((e) => e.seq)).toEqual([3, 4, 5, 6, 7, 8, 9]);
  });

  it("R81: subscribed before a resume, from inside the crashed response: the rest of what it delivered, the retraction (numbered next, pointing back), then the new answer; from 0: the replay of the final journal", async () => {
    const first = sessionAgent(memoryRunStore());
    const seen = recordAll(first);
    await first.prompt("one");
    const records = (first as unknown as { durable: { store: RunStore } }).durable.store.readSession("s").records().map((r) => r.record);
    // The crash: the second response (the answer after the tools) was streaming; its record never
    // came, but what it delivered was written as it went (its `out` records).
    const cut = records.map((r) => (r as { k: string }).k).lastIndexOf("response");
    expect((records[cut - 1] as { k: string; job: string }).k + " " + (records[cut - 1] as { job: string }).job).toBe("out streamResponse");
    const crashed = memoryRunStore();
    const writer = crashed.openSession("s");
    for (const record of records.slice(0, cut)) writer.append(record);
    writer.release();
    const prefix = (await replayRun(crashed.readSession("s").records()))[0]!;
    const replayedPrefix = prefix.events.length;
    // The partial answer: its start and deltas, provisional, numbered as they were delivered.
    const fromSeq = prefix.events.map((e) => e.type).lastIndexOf("message_start") + 1;
    expect(prefix.events.slice(fromSeq - 1).map((e) => timeless(e))).toEqual(seen.slice(fromSeq - 1, replayedPrefix).map((e) => e.json));
    expect(prefix.provisional.slice(fromSeq - 1).every(Boolean)).toBe(true);
    // The consumer had processed 3 provisional events of the answer the crash cut short.
    const after = fromSeq + 2;
    expect(after).toBeLessThan(replayedPrefix);
    expect(seen[after - 1]!.provisional).toBe(true);
    const next = sessionAgent(crashed);
    const reconnecting: Got[] = [];
    const fromStart: Got[] = [];
    next.subscribe((event, _s, delivery) => void reconnecting.push(entry(event, delivery)), { after, runtimeEvents: true });
    next.subscribe((event, _s, delivery) => void fromStart.push(entry(event, delivery)), { after: 0, runtimeEvents: true });
    expect(await next.resume()).toBe(true);
    const final = (await replayRun(crashed.readSession("s").records()))[0]!.events.map(timeless);
    expect(fromStart.map((e) => e.json)).toEqual(final);
    expect(fromStart.map((e) => e.seq)).toEqual(final.map((_, i) => i + 1));
    // The retraction takes the next number, above every event it takes back.
    expect(JSON.parse(final[replayedPrefix]!)).toEqual({ type: "message_discarded", reason: "interrupted", fromSeq });
    expect(reconnecting.map((e) => e.seq)).toEqual(final.slice(after).map((_, i) => after + 1 + i));
    expect(reconnecting.map((e) => e.json)).toEqual(final.slice(after));
    expect(reconnecting.slice(0, replayedPrefix - after).every((e) => e.provisional)).toBe(true);
  });

  it("R81: durableEventSource: a page reload subscribes from its last seq and gets the rest of the run once", async () => {
    const agent = sessionAgent(memoryRunStore());
    const all = recordAll(agent);
    await agent.prompt("one");
    const source = durableEventSource(agent);
    expect(source.lastSeq).toBe(all.at(-1)!.seq);
    const firstPage: SequencedEvent[] = [];
    const reloaded: SequencedEvent[] = [];
    let unsubscribeFirst = () => {};
    unsubscribeFirst = source.subscribe((entry) => {
      firstPage.push(entry);
      // The page goes away mid-response; the reload asks from the last seq it had.
      if (entry.event.type === "message_update" && firstPage.filter((e) => e.event.type === "message_update").length === 3) {
        unsubscribeFirst();
        source.subscribe((e) => void reloaded.push(e), { after: entry.seq });
      }
    }, { after: source.lastSeq });
    const runStart = source.lastSeq;
    await agent.prompt("two");
    expect(source.runStartAfter).toBe(runStart);
    const run = all.filter((e) => e.seq > runStart);
    expect([...firstPage, ...reloaded].map((e) => e.seq)).toEqual(run.map((e) => e.seq));
    expect([...firstPage, ...reloaded].map((e) => timeless(e.event))).toEqual(run.map((e) => e.json));
    source.close();
  });

  it("R81: a stored head that cannot be read (a damaged journal) goes to onError, never out of subscribe(); agent.sequence throws the store's typed error", async () => {
    const store = memoryRunStore();
    const first = sessionAgent(store);
    await first.prompt("one");
    first.release();
    const damage = new StoreCorruptError("sessions.db", "does not match its checksum", { sessionId: "s", seq: 3, what: "record" });
    const damaged: RunStore = {
      ...store,
      readSession: (sessionId) => ({
        ...store.readSession(sessionId),
        records: () => {
          throw damage;
        },
      }),
    };
    const agent = sessionAgent(damaged);
    const errors: unknown[] = [];
    const got: unknown[] = [];
    let unsubscribe: (() => void) | undefined;
    expect(() => (unsubscribe = agent.subscribe((event) => void got.push(event), { after: 0, onError: (error) => void errors.push(error) }))).not.toThrow();
    expect(errors).toEqual([damage]);
    expect(got).toEqual([]);
    unsubscribe?.();
    expect(() => agent.sequence).toThrow(StoreCorruptError);
  });

  it("R81: `after` is a sequence number; an Agent without a store has none (typed errors, nothing subscribed)", () => {
    const durable = sessionAgent(memoryRunStore());
    for (const after of [-1, 1.5, Number.NaN, "3" as unknown as number]) expect(() => durable.subscribe(() => {}, { after })).toThrow(AgentInputError);
    const plain = new Agent({ streamFn: script, initialState: { model: scriptedModel } });
    expect(() => plain.subscribe(() => {}, { after: 0 })).toThrow(AgentInputError);
    expect(plain.sequence).toBeUndefined();
  });
});
