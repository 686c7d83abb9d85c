/**
 * SPEC R110 with R81: a resumed durable run traces only what runs live. For a crash after each
 * record of a journaled run, the resumed run's chat spans are exactly the requests the resumed
 * process made (a request its journal answers is not traced again), and its run span says it resumed.
 */
import { describe, expect, it } from "vitest";
import type { ScriptedStreamFn } from "../../src/index.js";
import { runAgentLoop } from "../../src/index.js";
import { resumeAgentLoop } from "../../src/durable/resume.js";
import type { Json } from "../../src/store/run-store.js";
import { otelObserver } from "../../src/otel/index.js";
import { memoryRunStore } from "../support/memory-run-store.js";
import { crashSession, fixedClock, prompt } from "../durable/crash-scenario.js";
import { memoryTracer } from "./helpers.js";

function seeded(records: Json[]) {
  const store = memoryRunStore();
  const writer = store.openSession("s");
  for (const record of records) writer.append(record);
  writer.release();
  return store;
}

describe("R110, R81: a resumed run emits no span twice", () => {
  it("R110: at every crash point, the resumed run's request spans are the requests made live", async () => {
    const store = memoryRunStore();
    const session = crashSession(() => {}, { fast: true });
    const original = memoryTracer();
    await runAgentLoop([prompt], { messages: [], tools: session.tools }, session.config, () => {}, undefined, session.streamFn, {
      durable: { store, sessionId: "s" },
      clock: fixedClock,
      inspect: otelObserver({ tracer: original.tracer }),
    });
    const requests = (session.streamFn as ScriptedStreamFn).calls.length;
    expect(original.spans().filter((span) => span.name.startsWith("chat ")).length).toBe(requests);
    const records = store.readSession("s").records().map((r) => r.record);
    const seen = new Set<string>();
    for (let n = 1; n < records.length; n++) {
      const resumed = crashSession(() => {}, { fast: true });
      const { tracer, spans } = memoryTracer();
      const result = await resumeAgentLoop(
        { store: seeded(records.slice(0, n)), sessionId: "s" },
        { config: resumed.config, tools: resumed.tools, streamFn: resumed.streamFn, sink: () => {}, clock: fixedClock, inspect: otelObserver({ tracer }) },
      );
      expect(result.resumed).toBe(true);
      const live = (resumed.streamFn as ScriptedStreamFn).calls.length;
      const chats = spans().filter((span) => span.name.startsWith("chat ")).length;
      expect(chats, `crash after record ${n}`).toBe(live);
      const run = spans().find((span) => span.name === "invoke_agent")!;
      expect([run.attributes["xstate_agent_loop.resumed"], run.attributes["xstate_agent_loop.end_reason"]]).toEqual([true, "completed"]);
      seen.add(`${live}/${requests}`);
    }
    // Crashes early and late: from every request made again to none.
    expect(seen.has(`${requests}/${requests}`) || seen.has(`${requests - 1}/${requests}`)).toBe(true);
    expect(seen.has(`0/${requests}`)).toBe(true);
  });
});
