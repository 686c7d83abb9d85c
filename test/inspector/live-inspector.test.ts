import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, defineTool } from "../../src/index.js";
import { createLiveInspector, type LiveInspector, type WireMessage } from "../../src/inspector/index.js";
import { scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/testing/index.js";

// An Anthropic-key-shaped string: the sanitizer redacts it by shape wherever it appears.
const SECRET = "sk-ant-api03-" + "A".repeat(40);

let inspector: LiveInspector | undefined;
afterEach(async () => {
  await inspector?.close();
  inspector = undefined;
});

function lookup(name: string) {
  return defineTool({
    name,
    description: `looks something up (${name})`,
    parameters: z.object({ key: z.string() }),
    execute: async () => ({ content: [{ type: "text", text: `${name} done` }], details: {} }),
  });
}

/** Reads the SSE channel until `done(messages)` holds. */
async function readChannel(url: string, done: (messages: WireMessage[]) => boolean): Promise<{ reset: WireMessage[]; live: WireMessage[] }> {
  const response = await fetch(new URL("/events", url));
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let reset: WireMessage[] = [];
  const live: WireMessage[] = [];
  for (;;) {
    const { value, done: ended } = await reader.read();
    if (ended) throw new Error("the channel closed");
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = JSON.parse(frame.replace(/^(event: \w+\n)?data: /, "")) as WireMessage[];
      if (frame.startsWith("event: reset")) reset = data;
      else live.push(...data);
    }
    if (done([...reset, ...live])) {
      await reader.cancel();
      return { reset, live };
    }
  }
}

describe("live inspector (Node): the channel carries the actor tree, active states and events, sanitized", () => {
  it("streams an Agent run with parallel tools, binds the loopback, and sends no secret", async () => {
    inspector = await createLiveInspector({ port: 0 });
    expect(inspector.host).toBe("127.0.0.1");
    expect(inspector.url).toBe(`http://127.0.0.1:${inspector.port}/`);

    const agent = new Agent({
      streamFn: scriptedStreamFn([
        { content: [toolCall("search", { key: SECRET }), toolCall("fetch", { key: "b" })] },
        { content: [text("done")] },
      ]),
      initialState: { systemPrompt: "terse", model: scriptedModel, tools: [lookup("search"), lookup("fetch")] },
      inspect: [inspector.observer],
    });
    // A page connected before the run sees it live.
    const reading = readChannel(inspector.url, (messages) => messages.some((m) => m.t === "snap" && m.value === "done"));
    await agent.prompt("go");
    // Whatever happened before the page connected came in its opening (reset) message.
    const { reset, live: after } = await reading;
    const live = [...reset, ...after];

    const actors = live.filter((m) => m.t === "actor");
    const machineOf = new Map(actors.map((m) => [m.a, m]));
    // The tree: session → run → the two tool calls.
    const tree = actors.map((m) => ({ id: m.id, machine: m.machine, parent: m.parent === null ? null : machineOf.get(m.parent)?.id ?? "?" }));
    expect(tree).toEqual(
      expect.arrayContaining([
        { id: expect.any(String), machine: "session", parent: null },
        { id: "run", machine: "run", parent: expect.any(String) },
        { id: "tool:0", machine: "toolCall", parent: "run" },
        { id: "tool:1", machine: "toolCall", parent: "run" },
      ]),
    );
    // The run's active states as they changed (consecutive repeats folded).
    const run = actors.find((m) => m.machine === "run")!.a;
    const states = live.flatMap((m) => (m.t === "snap" && m.a === run ? [JSON.stringify(m.value)] : [])).filter((v, i, all) => v !== all[i - 1]);
    expect(states).toContain(JSON.stringify({ turn: { executingTools: "runningInParallel" } }));
    expect(states.at(-1)).toBe('"done"');
    expect(states.indexOf(JSON.stringify({ turn: { executingTools: "runningInParallel" } }))).toBeGreaterThan(
      states.findIndex((s) => s.includes("requesting")),
    );
    // Events are logged with their target actor.
    expect(live.some((m) => m.t === "event" && m.a === run)).toBe(true);
    // The secret was in a tool argument: it is nowhere on the channel, nor in what a late page gets.
    const wire = JSON.stringify(live) + JSON.stringify(inspector.messages());
    expect(wire).toContain("[redacted]");
    expect(wire).not.toContain(SECRET);
    expect(wire).not.toContain("sk-ant-");
  });

  it("gives a page that connects later the whole history, and lists each session", async () => {
    inspector = await createLiveInspector({ port: 0 });
    for (const id of ["first", "second"]) {
      const agent = new Agent({
        sessionId: id,
        streamFn: scriptedStreamFn([{ content: [text("hi")] }]),
        initialState: { systemPrompt: "terse", model: scriptedModel, tools: [] },
        inspect: inspector.observer,
      });
      await agent.prompt("hello");
    }
    const { reset } = await readChannel(inspector.url, () => true);
    expect(reset.filter((m) => m.t === "session").map((m) => m.s)).toEqual(["first", "second"]);
    expect(reset.some((m) => m.s === "second" && m.t === "snap" && m.value === "done")).toBe(true);
  });

  it("refuses a request whose Host is not the loopback (DNS rebinding), and requires the token off the loopback", async () => {
    inspector = await createLiveInspector({ port: 0 });
    const { request } = await import("node:http");
    const status = (path: string, host: string) =>
      new Promise<number>((resolve, reject) => {
        request({ host: "127.0.0.1", port: inspector!.port, path, headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
          .on("error", reject)
          .end();
      });
    expect([await status("/", `127.0.0.1:${inspector.port}`), await status("/", "evil.example:80"), await status("/nope", "localhost")]).toEqual([200, 403, 404]);
    // Only loopback literals and `localhost` pass: a name that merely starts like one is anyone's to point here.
    const hosts = ["localhost", "LOCALHOST:80", "127.0.0.1", "127.1.2.3:8080", "[::1]", "[::1]:4180",
      "127.attacker.example", "127.0.0.1.evil.example", "127.0.0.1.nip.io:4180", "127.0.0.1.", "localhost.", "::1", "[::1].evil.example", "evil@127.0.0.1"];
    const answers: Record<string, number> = {};
    for (const host of hosts) answers[host] = await status("/messages.json", host);
    expect(answers).toEqual({
      localhost: 200, "LOCALHOST:80": 200, "127.0.0.1": 200, "127.1.2.3:8080": 200, "[::1]": 200, "[::1]:4180": 200,
      "127.attacker.example": 403, "127.0.0.1.evil.example": 403, "127.0.0.1.nip.io:4180": 403, "127.0.0.1.": 403, "localhost.": 403, "::1": 403, "[::1].evil.example": 403, "evil@127.0.0.1": 403,
    });
    await inspector.close();

    // Bound to every interface (as in a container): the URL carries a token, and nothing is served without it.
    inspector = await createLiveInspector({ port: 0, host: "0.0.0.0" });
    const url = new URL(inspector.url);
    const token = url.searchParams.get("token");
    expect(token).toMatch(/^[A-Za-z0-9_-]{24}$/);
    const at = (search: string) => fetch(`http://127.0.0.1:${inspector!.port}/${search}`).then((r) => r.status);
    expect([await at(""), await at("?token=wrong"), await at(`?token=${token}`)]).toEqual([403, 403, 200]);
  });
});

describe("live inspector: a clicked state's transitions carry their guards and rule ids", () => {
  it("reads rule ids from the comments before states, transitions and guards (scripts/diagram/rules.ts)", async () => {
    const { machineRules } = await import("../../scripts/diagram/rules.js");
    const source = `
      const m = setup({
        guards: {
          // R7: the response asks for tool calls.
          hasCalls: () => true,
          plain: () => true,
        },
      }).createMachine({
        id: "m",
        states: {
          // R1, R2: the start.
          a: {
            on: {
              go: [
                // R9: first.
                { guard: "hasCalls", target: "b" },
                { guard: "plain", target: "b" },
              ],
              // R4a: a lone transition.
              stop: { target: "b" },
            },
          },
          b: { always: [{ guard: "hasCalls", target: "a" }] },
        },
      });`;
    expect(machineRules(source, "m")).toEqual({
      states: { "m.a": ["R1", "R2"] },
      transitions: { "m.a": { go: [["R9", "R7"], []], stop: [["R4a"]] }, "m.b": { "": [["R7"]] } },
    });
  });

  it("the page inlines each state's rule ids and its transitions' (from visualizations/machine-rules.json)", async () => {
    inspector = await createLiveInspector({ port: 0 });
    const page = await (await fetch(inspector.url)).text();
    const data = JSON.parse(/<script type="application\/json" id="transitions">(.*?)<\/script>/s.exec(page)![1]) as Record<string, { rules: string[]; transitions: { event: string; guard: string | null; targets: string[]; rules: string[] }[] }>;
    expect(data["toolCall.executing"]).toEqual({
      rules: ["R70", "R22"],
      transitions: [
        { event: "step.executeToolCall.done", guard: "isFinalized", targets: ["toolCall.finalizing"], rules: ["R23", "R29", "R13"] },
        { event: "step.executeToolCall.done", guard: null, targets: ["toolCall.settled"], rules: [] },
        { event: "call.cancel", guard: null, targets: ["toolCall.settled"], rules: [] },
      ],
    });
    expect(data["run.turn.requesting.startingRequest"]).toEqual({
      rules: ["R40"],
      transitions: [
        { event: "", guard: "hasTransformContext", targets: ["run.turn.requesting.transformingContext"], rules: expect.any(Array) },
        { event: "", guard: null, targets: ["run.turn.requesting.convertingToLlm"], rules: [] },
      ],
    });
    // Most of the run's guarded transitions name a rule.
    const guarded = Object.entries(data).filter(([id]) => id.startsWith("run.")).flatMap(([, state]) => state.transitions.filter((t) => t.guard));
    expect(guarded.filter((t) => t.rules.length > 0).length / guarded.length).toBeGreaterThan(0.5);
  });
});

describe("live inspector: a recorded trace in the same page (npm run view -- FILE --live)", () => {
  it("shows each run of a trace as a recorded session: its actors, their recorded states and its events; a file that is not a trace is a typed error", async () => {
    const { readFileSync } = await import("node:fs");
    const { TraceFormatError } = await import("../../src/inspector/index.js");
    inspector = await createLiveInspector({ port: 0 });
    inspector.showTrace(readFileSync(new URL("../visual/fixtures/sample-trace.jsonl", import.meta.url), "utf8"), "sample.jsonl");
    const { reset } = await readChannel(inspector.url, () => true);
    expect(reset.filter((m) => m.t === "session")).toEqual([{ t: "session", s: "sample.jsonl · run 1", kind: "recorded", at: expect.any(Number) }]);
    expect(reset.filter((m) => m.t === "actor").map((m) => [m.id, m.machine, m.parent])).toEqual([
      ["run", "run", null],
      ["tool:0", "toolCall", "run"],
      ["tool:1", "toolCall", "run"],
    ]);
    const runStates = reset.flatMap((m) => (m.t === "snap" && m.a === "run" ? [JSON.stringify(m.value)] : []));
    expect(runStates).toContain(JSON.stringify({ turn: { executingTools: "runningInParallel" } }));
    expect(runStates.at(-1)).toBe('"done"');
    const events = reset.flatMap((m) => (m.t === "event" ? [m.type] : []));
    expect([events[0], events.at(-1)]).toEqual(["agent_start", "agent_end"]);

    expect(() => inspector!.showTrace("not json\n", "x.jsonl")).toThrow(new TraceFormatError("line 1 of x.jsonl is not JSON"));
    expect(() => inspector!.showTrace('{"type":"trace","seq":0,"t":0,"version":2,"format":"xstate-agent-loop/trace"}\n', "v2.jsonl")).toThrow(TraceFormatError);
  });
});
