/**
 * Issue 20 item 4: a stored session exported to the trace format (src/trace/FORMAT.md) holds the
 * same event and state records as the trace the recorder wrote while the session ran live (only
 * `t` differs: journaled time instead of the live clock), so the viewer shows it the same way.
 */
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/index.js";
import { runAgentLoop } from "../../src/index.js";
import { createTraceRecorder } from "../../src/trace/index.js";
import { exportSessionTrace } from "../../src/durable/trace-export.js";
import { memoryRunStore } from "../support/memory-run-store.js";
import { crashSession, fixedClock, prompt } from "./crash-scenario.js";

const records = (lines: string[]) => lines.map((line) => JSON.parse(line) as { type: string; seq: number; t: number; [key: string]: unknown });
const comparable = (lines: string[]) => records(lines).filter((r) => r.type === "event" || r.type === "state").map(({ seq: _seq, t: _t, ...rest }) => rest);

describe("issue 20 item 4: a stored session as a trace", () => {
  it("exportSessionTrace writes the events and machine states the live trace recorded", async () => {
    const store = memoryRunStore();
    const live: string[] = [];
    const recorder = createTraceRecorder({ write: (line) => void live.push(line) });
    const session = crashSession(() => {}, { fast: true });
    await runAgentLoop([prompt], { messages: [], tools: session.tools }, session.config, (event) => recorder.recordEvent(event as AgentEvent), undefined, session.streamFn, {
      durable: { store, sessionId: "s" },
      clock: fixedClock,
      inspect: recorder.inspect,
    });
    const exported: string[] = [];
    const runs = await exportSessionTrace(store.readSession("s").records(), { write: (line) => void exported.push(line) });
    expect(runs).toBe(1);
    expect(exported.every((line) => line.endsWith("\n"))).toBe(true);
    const header = records(exported)[0];
    expect(header).toMatchObject({ type: "trace", seq: 0, t: 0, version: 1, format: "xstate-agent-loop/trace", model: { id: "scripted", provider: "scripted" } });
    expect(records(exported).map((r) => r.seq)).toEqual(exported.map((_, i) => i));
    expect(comparable(exported).filter((r) => r.type === "state").length).toBeGreaterThan(20);
    expect(comparable(exported)).toEqual(comparable(live));
  });
});
