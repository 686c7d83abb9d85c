/**
 * Coverage of `runToolCall`'s host machine (machines/tool-call-host.machine.ts) by real calls: the
 * host wired as `runToolCall` wires it (`provideToolCallHost(hosts)`, a runtime served under the
 * actor's key before it starts), with an `inspect` observer, which `runToolCall` itself does not
 * take. Each call's outcome must equal what the public `runToolCall` returns for the same call, so
 * the wiring measured is the one the entry point uses.
 */
import { describe, expect, it } from "vitest";
import { createActor, toPromise, type InspectionEvent } from "xstate";
import { runToolCall, type AgentTool, type AgentToolCallOutcome, type AssistantMessage, type RunToolCallOptions, type JsonObject, type ToolCall } from "../../src/index.js";
import { toolCallHostMachine } from "../../machines/tool-call-host.machine.js";
import { toolCallMachine } from "../../machines/tool-call.machine.js";
import { provideToolCallHost } from "../../src/actors/implementations.js";
import { createRunRuntime } from "../../src/actors/run-runtime.js";
import { RunHosts, rehostedRun } from "../../src/api/run-hosts.js";
import type { AgentLoopConfig } from "../../src/index.js";
import { Coverage, memo } from "./harness.js";

const hosts = new RunHosts();
const host = provideToolCallHost(hosts);

type Faults = "none" | "preflightRejects";

/**
 * `runToolCall` (src/api/run-tool-call.ts), inspected. `faults: "preflightRejects"` hands the
 * worker a deliberately faulty runtime whose bookkeeping of started calls throws, so the preflight
 * job rejects (a real one never does: it turns every app failure into the call's result).
 */
function hostedToolCall(toolCall: ToolCall, options: RunToolCallOptions, coverage: Coverage, faults: Faults = "none", snapshot?: unknown) {
  const inspect = (event: InspectionEvent) => coverage.record(event);
  const key = hosts.newKey();
  const input = { host: key, toolCall, hooks: { beforeToolCall: !!options.beforeToolCall, afterToolCall: !!options.afterToolCall }, startedAt: 0 };
  const actor = snapshot ? createActor(host, { snapshot: rehostedRun(snapshot as never, key), input, inspect }) : createActor(host, { input, inspect });
  const runtime = createRunRuntime({
    owner: actor,
    config: { beforeToolCall: options.beforeToolCall, afterToolCall: options.afterToolCall } as AgentLoopConfig,
    streamFn: () => {
      throw new Error("no model request");
    },
    tools: options.tools,
    sink: () => {},
    onSinkFailure: () => {},
  });
  const startedCalls =
    faults === "preflightRejects"
      ? new (class extends Set<string> {
          override add(): this {
            throw new Error("faulty runtime: the started calls cannot be recorded");
          }
        })()
      : runtime.startedCalls;
  // (Delegating, not a spread copy: the runtime's accessors and methods are on its prototype.)
  hosts.serve(key, Object.assign(Object.create(runtime) as typeof runtime, { startedCalls, hookContext: () => ({ assistantMessage: options.assistantMessage, context: options.context }) }));
  return actor;
}

async function outcomeOf(actor: ReturnType<typeof hostedToolCall>, toolCall: ToolCall): Promise<AgentToolCallOutcome> {
  const done = toPromise(actor);
  actor.start();
  const output = await done;
  return { toolCall, result: output.result, isError: output.isError, ...(output.durationMs !== undefined ? { durationMs: output.durationMs } : {}) };
}

const inspectedToolCall = (toolCall: ToolCall, options: RunToolCallOptions, coverage: Coverage) => outcomeOf(hostedToolCall(toolCall, options, coverage), toolCall);

const echo: AgentTool = {
  name: "echo",
  label: "echo",
  description: "echo",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  execute: async (_id, args) => ({ content: [{ type: "text", text: String((args as { text: string }).text) }], details: {} }),
};

const assistantMessage = { role: "assistant", content: [], stopReason: "toolUse" } as unknown as AssistantMessage;
const call = (name: string, args: JsonObject): ToolCall => ({ type: "toolCall", id: `c-${name}`, name, arguments: args });

/** Each call, and what its outcome must show (R21–R23). */
const cases: Record<string, { toolCall: ToolCall; options: RunToolCallOptions; expected: { isError: boolean; text: RegExp; details?: unknown } }> = {
  "executed and finalized": {
    toolCall: call("echo", { text: "hi" }),
    options: { tools: [echo], assistantMessage, context: { messages: [] }, afterToolCall: async () => ({ details: { seen: true } }) },
    expected: { isError: false, text: /^hi$/, details: { seen: true } },
  },
  "blocked by beforeToolCall": {
    toolCall: call("echo", { text: "hi" }),
    options: { tools: [echo], assistantMessage, context: { messages: [] }, beforeToolCall: async () => ({ block: true, reason: "no" }) },
    expected: { isError: true, text: /^no$/ },
  },
  "unknown tool": {
    toolCall: call("nope", {}),
    options: { tools: [echo], assistantMessage, context: { messages: [] } },
    expected: { isError: true, text: /^Tool nope not found$/ },
  },
  "invalid arguments": {
    toolCall: call("echo", { text: ["not", "a", "string"] }),
    options: { tools: [echo], assistantMessage, context: { messages: [] } },
    expected: { isError: true, text: /^Validation failed for tool "echo":/ },
  },
};

const play = memo(async (name: string) => {
  const coverage = new Coverage([toolCallHostMachine, toolCallMachine]);
  const { toolCall, options } = cases[name];
  const inspected = await inspectedToolCall(toolCall, options, coverage);
  const reference = await runToolCall(toolCall, options);
  return { coverage, inspected, reference };
});

/** The host's transitions no regular call takes: a restore mid-preflight (R13) and a preflight job that rejects. */
const directed: Record<string, (coverage: Coverage) => Promise<void>> = {
  // R13: persisted while beforeToolCall is in flight; the restored worker re-issues the preflight.
  async "step.reissue: restored while the preflight's beforeToolCall is in flight"(coverage) {
    let reached!: () => void;
    const gating = new Promise<void>((resolve) => (reached = resolve));
    const toolCall = call("echo", { text: "hi" });
    const options = (first: boolean): RunToolCallOptions => ({
      tools: [echo],
      assistantMessage,
      context: { messages: [] },
      beforeToolCall: async () => {
        if (!first) return undefined;
        reached();
        return new Promise<never>(() => {});
      },
    });
    const firstActor = hostedToolCall(toolCall, options(true), coverage);
    firstActor.start();
    await gating;
    expect(firstActor.getSnapshot().value).toBe("preflighting");
    const snapshot = JSON.parse(JSON.stringify(firstActor.getPersistedSnapshot()));
    firstActor.stop();
    const outcome = await outcomeOf(hostedToolCall(toolCall, options(false), coverage, "none", snapshot), toolCall);
    expect(outcome).toMatchObject({ isError: false, result: { content: [{ type: "text", text: "hi" }] } });
  },
  // R26: a defect in the preflight itself still gives the call exactly one (error) result.
  async "step.failed: the preflight job rejects (a faulty runtime)"(coverage) {
    const toolCall = call("echo", { text: "hi" });
    const outcome = await outcomeOf(hostedToolCall(toolCall, { tools: [echo], assistantMessage, context: { messages: [] } }, coverage, "preflightRejects"), toolCall);
    expect(outcome.isError).toBe(true);
    expect((outcome.result.content[0] as { text?: string }).text).toContain("faulty runtime");
  },
};

const playDirected = memo(async (name: string) => {
  const coverage = new Coverage([toolCallHostMachine, toolCallMachine]);
  await directed[name](coverage);
  return coverage;
});

const comparable = ({ durationMs, ...outcome }: AgentToolCallOutcome) => ({ ...outcome, timed: durationMs !== undefined });

describe("runToolCall's host machine", () => {
  for (const name of Object.keys(cases)) {
    it(`${name}: the inspected host gives runToolCall's outcome`, async () => {
      const { inspected, reference } = await play(name);
      const { expected } = cases[name];
      expect(inspected.isError).toBe(expected.isError);
      expect((inspected.result.content[0] as { text?: string }).text).toMatch(expected.text);
      if (expected.details) expect(inspected.result.details).toEqual(expected.details);
      expect(comparable(inspected)).toEqual(comparable(reference));
    });
  }

  for (const name of Object.keys(directed)) it(name, async () => expect((await playDirected(name)).taken(toolCallHostMachine)).toBeGreaterThan(0));

  it("coverage: the calls took every state and transition of the host machine", async () => {
    const coverage = new Coverage([toolCallHostMachine]);
    for (const name of Object.keys(cases)) coverage.merge((await play(name)).coverage);
    for (const name of Object.keys(directed)) coverage.merge(await playDirected(name));
    const { missing, summary } = coverage.report(toolCallHostMachine);
    console.log(`tool-call host machine: ${Object.keys(cases).length} calls and ${Object.keys(directed).length} directed ones; ${summary}`);
    expect(missing).toEqual({ states: [], transitions: [] });
  });
});
