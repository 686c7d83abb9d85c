/**
 * `createAgentTestModel`: each enumerated path does what its description says, against the app's
 * own tools and hooks, and every run is well formed.
 */
import { describe, expect, it } from "vitest";
import {
  createAgentTestModel,
  type AgentEvent,
  type AgentMessage,
  type AgentTestPathKind,
  type AgentTestRun,
  type AgentTool,
  type AssistantMessage,
} from "../../src/index.js";
import { eventProblems } from "../property/invariants.js";
import { AgentTestPlanError } from "../../src/testing/index.js";

const tool = (name: string, extra: Partial<AgentTool> = {}): AgentTool => ({
  name,
  label: name,
  description: name,
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  execute: async () => ({ content: [{ type: "text", text: `${name} real` }], details: {} }),
  ...extra,
});

const assistants = (messages: AgentMessage[]) => messages.filter((m): m is AssistantMessage => m.role === "assistant");
const ends = (events: AgentEvent[]) => events.filter((e): e is Extract<AgentEvent, { type: "tool_execution_end" }> => e.type === "tool_execution_end");
const resultText = (end: { result: { content: { type: string; text?: string }[] } }) => end.result.content.map((c) => c.text ?? "").join("");
const stops = (run: AgentTestRun) => assistants(run.messages).map((m) => m.stopReason);
const userTexts = (run: AgentTestRun) => run.messages.flatMap((m) => (m.role === "user" && typeof m.content === "string" ? [m.content] : []));

/** What each kind of path must show. */
const expectations: Record<AgentTestPathKind, (run: AgentTestRun) => void> = {
  answer: (run) => {
    expect(stops(run)).toEqual(["stop"]);
    expect(run.states).not.toContain("turn.executingTools");
  },
  "provider-error": (run) => expect(stops(run)).toEqual(["error"]),
  "abort-while-streaming": (run) => expect(stops(run)).toEqual(["aborted"]),
  steering: (run) => {
    expect(userTexts(run)).toContain("Steering message (test model)");
    expect(assistants(run.messages)).toHaveLength(2);
  },
  "follow-up": (run) => {
    expect(userTexts(run)).toContain("Follow-up message (test model)");
    expect(stops(run)).toEqual(["stop", "stop"]);
    expect(run.states).toContain("pollingFollowUps");
  },
  "finish-turn-continue": (run) => expect(stops(run)).toEqual(["stop", "stop"]),
  "tool-success": (run) => {
    expect(ends(run.events).map((e) => e.isError)).toEqual([false]);
    expect(stops(run)).toEqual(["toolUse", "stop"]);
  },
  "tool-error-result": (run) => expect(ends(run.events).map((e) => [e.isError, resultText(e)])).toEqual([[true, "read failed (test model)"]]),
  "tool-throws": (run) => expect(ends(run.events).map((e) => [e.isError, resultText(e)])).toEqual([[true, "read threw (test model)"]]),
  "tool-blocked": (run) => expect(ends(run.events).map((e) => resultText(e))).toEqual(["Blocked (test model)"]),
  "tool-terminates": (run) => {
    expect(ends(run.events).map((e) => e.result.terminate)).toEqual([true]);
    expect(stops(run)).toEqual(["toolUse"]);
  },
  truncated: (run) => {
    expect(stops(run)).toEqual(["length", "stop"]);
    expect(resultText(ends(run.events)[0])).toContain("token limit");
  },
  "abort-while-tool-runs": (run) => {
    expect(stops(run)).toEqual(["toolUse", "aborted"]);
    expect(run.states).toContain("turn.executingTools.runningInParallel");
  },
  "finish-turn-end": (run) => {
    expect(stops(run)).toEqual(["toolUse"]);
    expect(run.messages[run.messages.length - 1].role).toBe("toolResult");
  },
  "parallel-batch": (run) => expect(ends(run.events).map((e) => e.toolName).sort()).toEqual(["read", "write"]),
  "tool-approved": (run) => {
    expect(ends(run.events).map((e) => [e.isError, resultText(e)])).toEqual([[false, "read done (test model)"]]);
    expect(stops(run)).toEqual(["toolUse", "stop"]);
  },
  "tool-rejected": (run) => {
    expect(ends(run.events).map((e) => e.isError)).toEqual([true]);
    expect(resultText(ends(run.events)[0])).toContain("Rejected (test model)");
  },
};

describe("createAgentTestModel", () => {
  // R82: read waits for approval, so every one of its paths shows the model deciding it (it used to hang).
  const model = createAgentTestModel({ tools: [tool("read", { needsApproval: true }), tool("write")], arguments: { read: { path: "a" }, write: { path: "b" } } });

  it("enumerates the loop's paths: the tool-free ones, each tool's, and one batch of every tool", () => {
    const kinds = new Set(model.paths.map((p) => p.kind));
    expect([...kinds].sort()).toEqual(Object.keys(expectations).sort());
    expect(model.paths.filter((p) => p.tool === "read").map((p) => p.description)).toEqual([
      "read succeeds",
      "read returns an error result",
      "read throws",
      "beforeToolCall blocks read",
      "read's result terminates the batch",
      "the response calling read is truncated (token limit)",
      "the run is aborted while read runs",
      "a steering message arrives during read's turn",
      "finishTurn ends the run after read",
      "read waits for approval and is approved",
      "read waits for approval and is rejected",
    ]);
  });

  for (const path of model.paths.filter((p) => p.tool !== "write")) {
    it(`${path.kind}: ${path.description}`, async () => {
      const run = await path.run();
      expect(eventProblems(run.events, run.messages)).toEqual([]);
      expect(run.states[0]).toBe("starting");
      expect(run.states[run.states.length - 1]).toBe("done");
      expect(run.realized).toBe(true);
      expectations[path.kind](run);
    });
  }

  it("runs the app's hooks on every path, and its real execute when asked", async () => {
    const seen: string[] = [];
    const app = createAgentTestModel({
      tools: [tool("read")],
      arguments: { read: { path: "a" } },
      execute: "real",
      config: {
        beforeToolCall: async ({ toolCall }) => void seen.push(`before ${toolCall.name}`),
        afterToolCall: async ({ toolCall, isError }) => void seen.push(`after ${toolCall.name} ${isError}`),
        finishTurn: async ({ message }) => void seen.push(`finish ${message.stopReason}`),
        getSteeringMessages: async () => [],
      },
    });
    const byKind = (kind: AgentTestPathKind) => app.paths.find((p) => p.kind === kind && p.tool === "read")!;

    const success = await byKind("tool-success").run();
    expect(ends(success.events).map(resultText)).toEqual(["read real"]);
    expect(seen.splice(0)).toEqual(["before read", "after read false", "finish toolUse", "finish stop"]);

    // The forced block still runs the app's beforeToolCall first; afterToolCall never sees a blocked call.
    await byKind("tool-blocked").run();
    expect(seen.splice(0)).toEqual(["before read", "finish toolUse", "finish stop"]);

    // The forced end runs the app's finishTurn first.
    await byKind("finish-turn-end").run();
    expect(seen.splice(0)).toEqual(["before read", "after read false", "finish toolUse"]);
  });

  it("an app hook that always continues still ends after a bounded number of requests", async () => {
    const app = createAgentTestModel({ tools: [], config: { finishTurn: async () => ({ action: "continue" }) } });
    const run = await app.paths.find((p) => p.kind === "answer")!.run();
    expect(assistants(run.messages)).toHaveLength(11);
    expect(stops(run).at(-1)).toBe("error");
  });

  describe("a path whose plan is not carried out says so", () => {
    const reads = (options: Parameters<typeof createAgentTestModel>[0]) => createAgentTestModel(options).paths.filter((p) => p.tool === "read");

    it("an app hook that blocks every call: the tool paths reject with AgentTestPlanError, naming why", async () => {
      const paths = reads({ tools: [tool("read")], arguments: { read: { path: "a" } }, config: { beforeToolCall: async () => ({ block: true, reason: "policy" }) } });
      const throws = paths.find((p) => p.kind === "tool-throws")!;
      const error = await throws.run().then(() => undefined, (reason: unknown) => reason);
      expect(error).toBeInstanceOf(AgentTestPlanError);
      expect((error as Error).message).toBe('plan not carried out: read throws: read never ran: its call ended "policy"');
      // The block path is what the app's hook did: it is carried out.
      expect((await paths.find((p) => p.kind === "tool-blocked")!.run()).realized).toBe(true);
    });

    it("arguments that fail validation: the run resolves with realized false when the test opts out", async () => {
      const success = reads({ tools: [tool("read")] }).find((p) => p.kind === "tool-success")!;
      const run = await success.run({ allowUnrealized: true });
      expect(run.realized).toBe(false);
      expect(run.unrealized).toMatch(/^read never ran: its call ended "Validation failed/);
    });

    it("a needsApproval predicate that lets the test's call through: the approved path says the call never waited", async () => {
      const [approved] = reads({ tools: [tool("read", { needsApproval: () => false })], arguments: { read: { path: "a" } } }).filter((p) => p.kind === "tool-approved");
      const run = await approved!.run({ allowUnrealized: true });
      expect(run.realized).toBe(false);
      expect(run.unrealized).toBe(`read never waited for approval: its call ended "read done (test model)"`);
    });
  });
});
