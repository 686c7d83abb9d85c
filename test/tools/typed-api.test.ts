/**
 * Issue 34 item 5: the typed API. `defineTool`'s `execute` gets its fifth argument typed
 * (R13's `context.replayed`, R14's `context.runSubAgent`), and `toolCallHooks` gives
 * `beforeToolCall`/`afterToolCall` each listed tool's validated arguments, told apart by `toolName`.
 * The `expectTypeOf` checks are compiled by `npm run typecheck`; the runs check the behaviour.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  agentLoop,
  defaultConvertToLlm,
  defineTool,
  toolCallHooks,
  type AgentMessage,
  type AgentTool,
  type ToolExecutionContext,
} from "../../src/index.js";
import { scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/testing/index.js";

const ok = (text: string) => ({ content: [{ type: "text" as const, text }], details: {} });

async function run(tools: AgentTool[], calls: ReturnType<typeof toolCall>[], hooks: object = {}): Promise<AgentMessage[]> {
  const stream = agentLoop(
    [{ role: "user", content: "go", timestamp: 1 }],
    { messages: [], tools },
    { model: scriptedModel, convertToLlm: defaultConvertToLlm, ...hooks },
    undefined,
    scriptedStreamFn([{ content: calls }, { content: [text("done")] }]),
  );
  for await (const _event of stream);
  return stream.result();
}

const resultTexts = (messages: AgentMessage[]) =>
  messages.flatMap((m) => (m.role === "toolResult" ? [m.content.map((c) => (c.type === "text" ? c.text : "")).join("")] : []));

describe("defineTool: execute's fifth argument (R13, R14)", () => {
  it("is typed as ToolExecutionContext, with the signal and update callback, and the loop passes it", async () => {
    const seen: { replayed: boolean; signal: boolean; subAgent: string }[] = [];
    const probe = defineTool({
      name: "probe",
      description: "Reports its execution context",
      parameters: z.object({}),
      execute: async (_id, _params, signal, onUpdate, context) => {
        expectTypeOf(signal).toEqualTypeOf<AbortSignal>();
        expectTypeOf(onUpdate).parameter(0).toHaveProperty("content");
        expectTypeOf(context).toEqualTypeOf<ToolExecutionContext>();
        expectTypeOf(context.replayed).toEqualTypeOf<boolean>();
        expectTypeOf(context.runSubAgent).returns.resolves.toEqualTypeOf<AgentMessage[]>();
        const added = await context.runSubAgent(
          { streamFn: scriptedStreamFn([{ content: [text("sub-answer")] }]), config: { model: scriptedModel, convertToLlm: defaultConvertToLlm } },
          { prompts: [{ role: "user", content: "sub", timestamp: 2 }] },
        );
        const last = added.at(-1);
        seen.push({
          replayed: context.replayed,
          signal: signal instanceof AbortSignal,
          subAgent: last?.role === "assistant" && last.content[0]?.type === "text" ? last.content[0].text : "",
        });
        return ok("probed");
      },
    });
    const messages = await run([probe], [toolCall("probe", {})]);
    expect(seen).toEqual([{ replayed: false, signal: true, subAgent: "sub-answer" }]);
    expect(resultTexts(messages)).toEqual(["probed"]);
  });
});

describe("toolCallHooks: beforeToolCall and afterToolCall typed by the tool list", () => {
  const writeFile = defineTool({
    name: "write_file",
    description: "Write a file",
    parameters: z.object({ path: z.string(), text: z.string(), mode: z.enum(["create", "overwrite"]).default("create") }),
    execute: async (_id, { path }) => ok(`wrote ${path}`),
  });
  const readFile = defineTool({
    name: "read_file",
    description: "Read a file",
    parameters: z.object({ path: z.string(), limit: z.number().default(100) }),
    execute: async (_id, { path }) => ok(`read ${path}`),
  });
  // Not in the hooks' list: the hooks never see its calls.
  const clock = defineTool({ name: "clock", description: "The time", parameters: z.object({}), execute: async () => ok("noon") });

  it("before: narrows args by toolName to the validated arguments, and skips unlisted tools", async () => {
    const seen: unknown[] = [];
    const hooks = toolCallHooks([writeFile, readFile], {
      beforeToolCall: async (context) => {
        if (context.toolName === "write_file") {
          expectTypeOf(context.args).toEqualTypeOf<{ path: string; text: string; mode: "create" | "overwrite" }>();
          seen.push({ tool: context.toolName, args: context.args });
          return context.args.path.startsWith("/") ? { block: true, reason: `refused ${context.args.path}` } : undefined;
        }
        expectTypeOf(context.toolName).toEqualTypeOf<"read_file">();
        expectTypeOf(context.args).toEqualTypeOf<{ path: string; limit: number }>();
        seen.push({ tool: context.toolName, args: context.args, limit: context.args.limit });
        return undefined;
      },
    });
    const messages = await run(
      [writeFile, readFile, clock],
      [toolCall("write_file", { path: "/etc/passwd", text: "x" }), toolCall("read_file", { path: "a.md" }), toolCall("clock", {})],
      hooks,
    );
    // The defaults in `args` show they are the validated arguments, not the model's.
    expect(seen).toEqual([
      { tool: "write_file", args: { path: "/etc/passwd", text: "x", mode: "create" } },
      { tool: "read_file", args: { path: "a.md", limit: 100 }, limit: 100 },
    ]);
    expect(resultTexts(messages)).toEqual(["refused /etc/passwd", "read a.md", "noon"]);
  });

  it("after: narrows args by toolName, overrides the listed tool's result, leaves the others", async () => {
    const hooks = toolCallHooks([readFile], {
      afterToolCall: async ({ toolName, args, result }) => {
        expectTypeOf(toolName).toEqualTypeOf<"read_file">();
        expectTypeOf(args).toEqualTypeOf<{ path: string; limit: number }>();
        return { content: [{ type: "text", text: `${result.content.length} block(s) of ${args.path}, limit ${args.limit}` }] };
      },
    });
    const messages = await run([readFile, clock], [toolCall("read_file", { path: "b.md" }), toolCall("clock", {})], hooks);
    expect(resultTexts(messages)).toEqual(["1 block(s) of b.md, limit 100", "noon"]);
  });

  it("an untyped AgentTool's args stay unknown", () => {
    const untyped: AgentTool = { name: "raw", label: "raw", description: "", parameters: {}, execute: async () => ok("") };
    const hooks = toolCallHooks([untyped], {
      beforeToolCall: async ({ args }) => {
        expectTypeOf(args).toEqualTypeOf<unknown>();
        return undefined;
      },
    });
    expect(Object.keys(hooks)).toEqual(["beforeToolCall"]);
  });
});
