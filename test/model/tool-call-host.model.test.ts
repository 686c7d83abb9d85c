/**
 * Coverage of `runToolCall`'s host machine (machines/tool-call-host.machine.ts) by real calls: the
 * host wired as `runToolCall` wires it (`provideToolCallHost(requireRuntime)`, a runtime bound to
 * the actor before it starts), with an `inspect` observer, which `runToolCall` itself does not
 * take. Each call's outcome must equal what the public `runToolCall` returns for the same call, so
 * the wiring measured is the one the entry point uses.
 */
import { describe, expect, it } from "vitest";
import { createActor, toPromise } from "xstate";
import { runToolCall, type AgentTool, type AgentToolCallOutcome, type AssistantMessage, type RunToolCallOptions, type ToolCall } from "../../src/index.js";
import { toolCallHostMachine } from "../../machines/tool-call-host.machine.js";
import { toolCallMachine } from "../../machines/tool-call.machine.js";
import { provideToolCallHost } from "../../src/actors/implementations.js";
import { createRunRuntime } from "../../src/actors/run-runtime.js";
import { bindRuntime, requireRuntime } from "../../src/api/run-hosts.js";
import type { AgentLoopConfig } from "../../src/index.js";
import { Coverage, memo } from "./harness.js";

const host = provideToolCallHost(requireRuntime);

/** `runToolCall` (src/api/run-tool-call.ts), inspected. */
async function inspectedToolCall(toolCall: ToolCall, options: RunToolCallOptions, coverage: Coverage): Promise<AgentToolCallOutcome> {
  const actor = createActor(host, {
    input: { index: 0, toolCall, mode: "sequential", hooks: { beforeToolCall: !!options.beforeToolCall, afterToolCall: !!options.afterToolCall }, startedAt: 0 },
    inspect: (event) => coverage.record(event),
  });
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
  bindRuntime(actor, { ...runtime, hookContext: () => ({ assistantMessage: options.assistantMessage, context: options.context }) });
  actor.start();
  const output = await toPromise(actor);
  return { toolCall, result: output.result, isError: output.isError, ...(output.durationMs !== undefined ? { durationMs: output.durationMs } : {}) };
}

const echo: AgentTool = {
  name: "echo",
  label: "echo",
  description: "echo",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  execute: async (_id, args) => ({ content: [{ type: "text", text: String((args as { text: string }).text) }], details: {} }),
};

const assistantMessage = { role: "assistant", content: [], stopReason: "toolUse" } as unknown as AssistantMessage;
const call = (name: string, args: Record<string, unknown>): ToolCall => ({ type: "toolCall", id: `c-${name}`, name, arguments: args });

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

  it("coverage: the calls took every state and transition of the host machine", async () => {
    const coverage = new Coverage([toolCallHostMachine]);
    for (const name of Object.keys(cases)) coverage.merge((await play(name)).coverage);
    const { missing, summary } = coverage.report(toolCallHostMachine);
    console.log(`tool-call host machine: ${Object.keys(cases).length} calls; ${summary}`);
    expect(missing).toEqual({ states: [], transitions: [] });
  });
});
