/**
 * Issue 19 item 2: the inspector's sanitizer and the trace recorder reuse what they already did
 * (a sanitized form per object, a message's JSON per message). Reuse changes no output, and no
 * secret gets through it: not one written into an object after it was sanitized, nor one added to
 * the options afterwards.
 */
import { describe, expect, it } from "vitest";
import type { InspectionEvent } from "xstate";
import { runAgentLoop, scriptedStreamFn, text, toolCall, type AgentEvent, type AgentMessage } from "../../src/index.js";
import { sanitizeInspectionEvent, sanitizeValue, sanitizingObserver, type SanitizeOptions } from "../../src/inspect/index.js";
import { sanitizeInspectionEventAfresh } from "../../src/inspect/sanitize.js";
import { createTraceRecorder, reduceEventForTrace, redact } from "../../src/trace/index.js";
import { createEventJson } from "../../src/trace/event-json.js";
import { plainJson } from "../../src/trace/plain-json.js";
import { msJson } from "../../src/trace/state-json.js";
import { replaceImageData } from "../../src/trace/reduce.js";
import { LITERAL_NEEDLES, toJsonSafe } from "../../src/trace/json.js";
import { SECRET_LITERALS, SECRET_PATTERNS, mayMatchSecretPattern } from "../../src/boundary/secret-keys.js";
import { baseConfig, ok, tool, user } from "../loop/helpers.js";

const API_KEY = "sk-ant-api03-abcdefghijklmnopqrstuv";
const PRIVATE = "hunter2-private-value";

/**
 * Two runs, the second continuing the first's transcript (its messages are the same objects),
 * with tool details holding a credential, a Date, a Map, a cycle, a long string, images, and the
 * API key and a caller's secret in the prompt.
 */
async function recordRuns() {
  const inspections: InspectionEvent[] = [];
  const events: AgentEvent[] = [];
  const cyclic: Record<string, unknown> = { name: "loop" };
  cyclic.self = cyclic;
  const shot = tool("shot", async () =>
    ok("shot", {
      content: [
        { type: "text", text: "ok" },
        { type: "image", data: "aGVsbG8=", mimeType: "image/png" },
      ],
      details: { token: "t0k3n", when: new Date(0), map: new Map([["a", 1]]), cyclic, note: `key ${API_KEY}`, big: "x".repeat(5_000) },
    }),
  );
  let messages: AgentMessage[] = [];
  for (const prompt of [`my key is ${API_KEY} and ${PRIVATE}`, "again"]) {
    const added = await runAgentLoop(
      [user(prompt)],
      { messages, tools: [shot] },
      baseConfig(),
      (event) => void events.push(event),
      undefined,
      scriptedStreamFn([{ content: [toolCall("shot", { q: 1 }), toolCall("shot", { q: 2 })] }, { content: [text(`done ${"word ".repeat(40)}`)] }]),
      { inspect: (event) => void inspections.push(event) },
    );
    messages = [...messages, ...added];
  }
  return { inspections, events };
}

const fields = (event: InspectionEvent) => {
  const e = event as { snapshot?: unknown; event?: unknown; action?: unknown };
  return { snapshot: e.snapshot, event: e.event, action: e.action };
};

describe("issue 19 item 2: the sanitizer reuses forms, and gives what it gave without", () => {
  it("every inspection event of two runs sanitizes as it does afresh, and a second time to the same objects", async () => {
    const { inspections } = await recordRuns();
    const options: SanitizeOptions = { secrets: [PRIVATE] };
    let reused = 0;
    for (const event of inspections) {
      const once = sanitizeInspectionEvent(event, options);
      expect(fields(once)).toEqual(fields(sanitizeInspectionEventAfresh(event, options)));
      const twice = sanitizeInspectionEvent(event, options);
      expect(fields(twice)).toEqual(fields(once));
      if (event.type === "@xstate.snapshot" && (twice as { snapshot: unknown }).snapshot === (once as { snapshot: unknown }).snapshot) reused++;
    }
    // The comparison above is about reuse: most snapshots came back as the very same object.
    expect(reused).toBeGreaterThan(inspections.filter((event) => event.type === "@xstate.snapshot").length / 2);
    const wire = JSON.stringify(inspections.map((event) => fields(sanitizeInspectionEvent(event, options))));
    expect(wire).not.toContain(API_KEY);
    expect(wire).not.toContain(PRIVATE);
    expect(wire).not.toContain("t0k3n");
  });

  it("sanitizingObserver delivers the same fields, sanitized when first read", async () => {
    const { inspections } = await recordRuns();
    const options: SanitizeOptions = { secrets: [PRIVATE] };
    const delivered: InspectionEvent[] = [];
    const observer = sanitizingObserver((event) => void delivered.push(event), options);
    for (const event of inspections) observer.next(event);
    expect(delivered).toHaveLength(inspections.length);
    delivered.forEach((event, i) => {
      expect(event.type).toBe(inspections[i]!.type);
      expect(fields(event)).toEqual(fields(sanitizeInspectionEventAfresh(inspections[i]!, options)));
      // A spread copy and JSON see the sanitized fields too.
      if ("snapshot" in event) expect({ ...event }.snapshot).toBe((event as { snapshot: unknown }).snapshot);
    });
    const json = JSON.stringify(delivered.map(fields));
    expect(json).not.toContain(API_KEY);
    expect(json).not.toContain(PRIVATE);
  });

  it("an observer may write, delete and copy the fields it gets; XState's own event is never touched", async () => {
    const { inspections } = await recordRuns();
    const raw = inspections.find((event) => event.type === "@xstate.snapshot")!;
    const rawSnapshot = (raw as { snapshot: unknown }).snapshot;
    let got: InspectionEvent | undefined;
    sanitizingObserver((event) => void (got = event)).next(raw);
    const event = got as unknown as Record<string, unknown>;
    expect(Object.keys(event)).toEqual(Object.keys(raw));
    expect(JSON.parse(JSON.stringify(event.snapshot))).toEqual(JSON.parse(JSON.stringify(sanitizeInspectionEventAfresh(raw).snapshot)));
    event.snapshot = { replaced: true };
    expect(event.snapshot).toEqual({ replaced: true });
    delete event.event;
    expect("event" in event).toBe(false);
    expect(Object.keys(event)).not.toContain("event");
    expect((raw as { snapshot: unknown }).snapshot).toBe(rawSnapshot);
    expect((raw as { event?: unknown }).event).toBeDefined();
  });

  it("an object mutated after it was sanitized never sends what was written into it", () => {
    const model = { id: "m", provider: "p", headers: { accept: "application/json" }, limits: [1, 2, 3, 4, 5, 6, 7, 8] };
    const options: SanitizeOptions = { secrets: [PRIVATE] };
    const first = sanitizeValue({ model, turn: 1 }, options);
    // Against the contract (context is immutable): the reused form is the one first made.
    Object.assign(model, { note: `${API_KEY} ${PRIVATE}`, apiKey: "plain-key-value" });
    Object.assign(model.headers, { authorization: "Bearer abcdefghijklmnop" });
    model.limits.push(42);
    const second = sanitizeValue({ model, turn: 2 }, options) as { model: unknown };
    expect(second.model).toEqual((first as { model: unknown }).model);
    const json = JSON.stringify(second);
    for (const leaked of [API_KEY, PRIVATE, "plain-key-value", "abcdefghijklmnop"]) expect(json).not.toContain(leaked);
  });

  it("an array that grew in place (the Agent's transcript) is sanitized again; secrets in what it gained are redacted", () => {
    const options: SanitizeOptions = { secrets: [PRIVATE] };
    const transcript: AgentMessage[] = Array.from({ length: 10 }, (_, i) => user(`message ${i}`));
    const first = sanitizeValue({ messages: transcript }, options) as { messages: { count?: number } };
    transcript.push(user(`secret ${PRIVATE}`));
    const second = sanitizeValue({ messages: transcript }, options) as { messages: { count?: number } };
    expect(JSON.stringify(second)).not.toEqual(JSON.stringify(first));
    expect(JSON.stringify(second)).toContain("11");
    expect(JSON.stringify(second)).not.toContain(PRIVATE);
  });

  it("a secret or redacted key added to the options later is redacted in forms made before", () => {
    const secrets: string[] = [];
    const redactKeys: string[] = [];
    const options: SanitizeOptions = { secrets, redactKeys };
    const context = { session: { note: `call ${PRIVATE}`, internalRef: "ref-123456", list: ["a", "b", "c", "d", "e", "f", "g", "h"] } };
    const before = JSON.stringify(sanitizeValue(context, options));
    expect(before).toContain(PRIVATE);
    expect(before).toContain("ref-123456");
    secrets.push(PRIVATE);
    redactKeys.push("internalRef");
    const after = JSON.stringify(sanitizeValue(context, options));
    expect(after).not.toContain(PRIVATE);
    expect(after).not.toContain("ref-123456");
  });

  it("a reused form is frozen: a consumer cannot change what later events carry", () => {
    const options: SanitizeOptions = {};
    const context = { settings: { mode: "prompt", budget: { maxTurns: 5 }, flags: [true, false, true, false, true, false] } };
    const form = (sanitizeValue(context, options) as { settings: Record<string, unknown> }).settings;
    expect(Object.isFrozen(form)).toBe(true);
    expect(() => {
      "use strict";
      form.injected = API_KEY;
    }).toThrow(TypeError);
    expect(JSON.stringify(sanitizeValue({ ...context }, options))).not.toContain(API_KEY);
  });
});

describe("issue 19 item 2: the trace recorder writes each message once, and the same bytes", () => {
  it("each event's JSON is what the reductions and redaction gave, reused or not", async () => {
    const { events } = await recordRuns();
    expect(events.some((event) => event.type === "message_update")).toBe(true);
    const secrets = [PRIVATE];
    const eventJson = createEventJson(secrets);
    for (const event of events) {
      const expected = redact(JSON.stringify(reduceEventForTrace(event)), secrets);
      expect(eventJson(event)).toBe(expected);
      expect(eventJson(event)).toBe(expected);
    }
  });

  it("whole lines are unchanged, and neither the API key nor a caller's secret is written", async () => {
    const { events } = await recordRuns();
    const lines: string[] = [];
    const recorder = createTraceRecorder({ write: (line) => void lines.push(line), now: () => 5, secrets: [PRIVATE] });
    for (const event of events) recorder.recordEvent(event);
    const records = lines.slice(1).map((line) => JSON.parse(line) as { type: string; seq: number; t: number; run: number; event: AgentEvent });
    records.forEach((record, i) => {
      expect(Object.keys(record)).toEqual(["type", "seq", "t", "run", "event"]);
      expect(lines[i + 1]).toBe(`${redact(JSON.stringify({ type: "event", seq: record.seq, t: record.t, run: record.run, event: reduceEventForTrace(events[i]!) }), [PRIVATE])}\n`);
    });
    const trace = lines.join("");
    for (const leaked of [API_KEY, PRIVATE, "t0k3n"]) expect(trace).not.toContain(leaked);
  });

  it("a secret added to `secrets` later, or written into a recorded message, is not written", () => {
    const secrets: string[] = [];
    const lines: string[] = [];
    const recorder = createTraceRecorder({ write: (line) => void lines.push(line), secrets });
    const message = { role: "user", content: `see ${PRIVATE}`, timestamp: 1 } as AgentMessage;
    recorder.recordEvent({ type: "message_start", message });
    expect(lines.at(-1)).toContain(PRIVATE);
    secrets.push(PRIVATE);
    recorder.recordEvent({ type: "message_end", message });
    expect(lines.at(-1)).not.toContain(PRIVATE);
    Object.assign(message, { content: `now ${API_KEY}`, apiKey: "plain-key-value" });
    recorder.recordEvent({ type: "agent_end", messages: [message] });
    expect(lines.at(-1)).not.toContain(API_KEY);
    expect(lines.at(-1)).not.toContain("plain-key-value");
  });
});

/** Values that need a reduction, or that JSON writes its own way, next to plain ones (issue 19, bench (i)). */
function awkwardValues(): unknown[] {
  let deep: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < 70; i++) deep = { next: deep };
  const holes = [1, , 3];
  const cyclic: Record<string, unknown> = { name: "c" };
  cyclic.self = cyclic;
  const shared = { n: 1 };
  const throwing = { ok: 1 };
  Object.defineProperty(throwing, "bad", { enumerable: true, get: () => { throw new Error("no"); } });
  const bare = Object.assign(Object.create(null) as object, { a: 1, token: "t0k3n" });
  return [
    "text", 1.5, NaN, -Infinity, true, null, undefined, 10n, () => 1, Symbol("s"),
    { n: 0 }, { a: [1, "two", null, { b: false }] }, { token: "t0k3n" }, { token: null }, { token: "" }, { token: undefined }, { apiKey: NaN },
    { type: "image", data: "aGVsbG8=", mimeType: "image/png" }, { details: { type: "image", data: "aGVsbG8=", password: "pw" } },
    { content: [{ type: "image", data: "aGVsbG8=" }] }, { big: 10n }, { when: new Date(0) }, { map: new Map([["a", 1]]) },
    { fn: () => 1, sym: Symbol("s"), undef: undefined, list: [undefined, () => 1] }, holes, deep, cyclic, { a: shared, b: shared },
    throwing, bare, { nested: bare }, { json: { toJSON: () => "custom" } }, Object.assign([1, 2], { toJSON: () => "array" }),
  ];
}

describe("issue 19, bench (i): the trace's fast paths write what the reductions write", () => {
  it("every secret pattern holds one of SECRET_LITERALS, so text without them needs no pattern", () => {
    for (const pattern of SECRET_PATTERNS) expect(SECRET_LITERALS.some((literal) => pattern.source.includes(literal))).toBe(true);
    // The recorder looks for a rarer part of each literal first.
    for (const literal of SECRET_LITERALS) expect(LITERAL_NEEDLES.some((needle) => literal.includes(needle))).toBe(true);
    expect(mayMatchSecretPattern(`key ${API_KEY}`)).toBe(true);
    expect(mayMatchSecretPattern("Bearer abcdefghijkl")).toBe(true);
    expect(mayMatchSecretPattern("AIzaSyA1234567890abcdefghijklmnopqrstuv")).toBe(true);
    expect(redact('{"k":"AIzaSyA1234567890abcdefghijklmnopqrstuv"}', [])).toBe('{"k":"[redacted]"}');
    expect(mayMatchSecretPattern('{"type":"turn_start"}')).toBe(false);
    expect(redact(`a ${API_KEY} b ${PRIVATE}`, [PRIVATE])).toBe("a [redacted] b [redacted]");
  });

  it("plainJson writes JSON.stringify(replaceImageData(toJsonSafe(value))) for plain values, and refuses the others", () => {
    for (const value of awkwardValues()) {
      let written: string | undefined;
      try {
        written = plainJson(value, 1, false);
      } catch {
        // Not plain (a cycle, a Date, a getter that throws, too deep): the recorder takes its general path.
        continue;
      }
      const copy = toJsonSafe(value);
      expect(written).toBe(copy === undefined ? undefined : JSON.stringify(replaceImageData(copy)));
    }
  });

  it("an event without messages is written as the reductions and redaction give it, whatever its payload", () => {
    const secrets = [PRIVATE];
    const eventJson = createEventJson(secrets);
    for (const value of awkwardValues()) {
      for (const event of [
        { type: "tool_execution_start", toolCallId: "c1", toolName: "t", args: value },
        { type: "tool_execution_end", toolCallId: "c1", toolName: "t", result: { content: [{ type: "text", text: `ok ${PRIVATE}` }], details: value }, isError: false },
        { type: "tool_execution_update", toolCallId: "c1", toolName: "t", args: {}, partialResult: value, apiKey: `${API_KEY}` },
      ] as unknown as AgentEvent[]) {
        const written = eventJson(event);
        if (written === undefined) continue;
        expect(written).toBe(redact(JSON.stringify(reduceEventForTrace(event)), secrets));
        expect(written).not.toContain(PRIVATE);
        expect(written).not.toContain(API_KEY);
      }
    }
  });
});

describe("issue 19, bench (i): state lines from kept parts write what redacting the whole record writes", () => {
  /** The state line as `emit` writes any record: the whole record's JSON, then redacted. */
  const reference = (line: string, secrets: readonly string[], inspection: { snapshot: { value?: unknown; status?: string }; event: { type: string } }, actor: string) => {
    const { seq, t, run } = JSON.parse(line) as { seq: number; t: number; run: number };
    const record = { type: "state", seq, t, run, actor, value: toJsonSafe(inspection.snapshot.value) ?? null, status: inspection.snapshot.status ?? "active", cause: inspection.event.type };
    return `${redact(JSON.stringify(record), secrets)}\n`;
  };
  const snapshotOf = (value: unknown, cause: string, machine = "run", id?: string) => ({
    type: "@xstate.snapshot",
    snapshot: { machine: { id: machine }, value, status: "active" },
    actorRef: { id, sessionId: "s1", _parent: machine === "run" ? undefined : { sessionId: "s1" } },
    event: { type: cause },
  });

  it("msJson writes JSON.stringify(us / 1000) for every time the recorder stamps", () => {
    for (let us = 0; us < 100_000; us++) expect(msJson(us)).toBe(JSON.stringify(us / 1000));
    for (let i = 0; i < 20_000; i++) {
      const us = Math.floor(Math.random() * 2 ** 43);
      expect(msJson(us)).toBe(JSON.stringify(us / 1000));
    }
    for (const odd of [-0, -1, -1234, 2 ** 43, 2 ** 60, 1.5, NaN, Infinity]) expect(msJson(odd)).toBe(JSON.stringify(odd / 1000));
  });

  it("a real run's state lines, and state names, actors and causes holding a secret or a key", async () => {
    const { inspections } = await recordRuns();
    let clock = 0;
    for (const secrets of [[PRIVATE], [], ["status"], ['a"b'], ["turn"]]) {
      const lines: string[] = [];
      const recorder = createTraceRecorder({ write: (line) => void lines.push(line), now: () => (clock += 0.1234567), secrets });
      const made = [
        snapshotOf({ turn: { requesting: `named ${PRIVATE}` } }, `cause ${API_KEY}`),
        snapshotOf(`state ${PRIVATE}`, "xstate.init", "toolCall", `tool:${PRIVATE}`),
        snapshotOf({ turn: "status" }, "a\"b \\ status"),
        ...awkwardValues().map((value) => snapshotOf(value, "odd")),
      ];
      const all = [...(inspections as unknown as ReturnType<typeof snapshotOf>[]), ...made, ...made];
      for (const inspection of all) {
        const before = lines.length;
        recorder.inspect(inspection as unknown as InspectionEvent);
        if (lines.length === before) continue;
        const machine = inspection.snapshot.machine?.id;
        const actor = machine === "run" ? "run" : (inspection.actorRef.id ?? "tool");
        expect(lines.at(-1)).toBe(reference(lines.at(-1)!, secrets, inspection, actor));
        if (secrets.includes(PRIVATE)) expect(lines.at(-1)).not.toContain(PRIVATE);
        expect(lines.at(-1)).not.toContain(API_KEY);
      }
      expect(lines.length).toBeGreaterThan(made.length * 2);
    }
  });

  it("a secret added to `secrets` later is redacted in state names and causes written before", () => {
    const secrets: string[] = [];
    const lines: string[] = [];
    const recorder = createTraceRecorder({ write: (line) => void lines.push(line), secrets });
    const inspection = snapshotOf({ turn: PRIVATE }, PRIVATE) as unknown as InspectionEvent;
    recorder.inspect(inspection);
    expect(lines.at(-1)).toContain(PRIVATE);
    secrets.push(PRIVATE);
    recorder.inspect(inspection);
    expect(lines.at(-1)).not.toContain(PRIVATE);
    expect(lines.at(-1)).toContain('"value":{"turn":"[redacted]"}');
  });
});
