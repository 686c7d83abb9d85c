import { describe, expect, expectTypeOf, it } from "vitest";
import * as z from "zod";
import * as zm from "zod/mini";
import { toolDeclKey } from "../../src/transcript/declaration-key.js";
import { declarationKey, defineTool, toolDeclaration } from "../../src/tools/index.js";
import type { AgentTool } from "../../src/types.js";

const done = { content: [], details: undefined };

describe("defineTool", () => {
  it("types execute params from the zod schema (z.output) and keeps the schema on the tool", () => {
    const params = z.object({ path: z.string(), limit: z.int().default(10), mode: z.enum(["a", "b"]).optional() });
    const tool = defineTool({
      name: "read",
      description: "Read a file",
      parameters: params,
      execute: async (_id, p) => {
        expectTypeOf(p).toEqualTypeOf<{ path: string; limit: number; mode?: "a" | "b" | undefined }>();
        return { content: [{ type: "text", text: p.path }], details: { lines: p.limit } };
      },
    });
    // The literal name lets `toolCallHooks` tell a list's tools apart.
    expectTypeOf(tool).toEqualTypeOf<AgentTool<{ path: string; limit: number; mode?: "a" | "b" | undefined }, { lines: number }> & { name: "read" }>();
    expect(tool.parameters).toBe(params);
    expect(tool.label).toBe("read");
  });

  it("accepts a JSON Schema object with caller-asserted params and passes optional fields through", () => {
    const prepareArguments = (a: unknown) => a;
    const tool = defineTool<{ q: string }>({
      name: "search",
      label: "Search",
      description: "Search",
      parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
      execute: async (_id, p) => {
        expectTypeOf(p).toEqualTypeOf<{ q: string }>();
        return done;
      },
      prepareArguments,
      executionMode: "sequential",
      outputSchema: { type: "object" },
    });
    expect(tool).toMatchObject({ label: "Search", executionMode: "sequential", outputSchema: { type: "object" } });
    expect(tool.prepareArguments).toBe(prepareArguments);
    expect(Object.keys(defineTool({ name: "x", description: "", parameters: {}, execute: async () => done }))).toEqual([
      "name",
      "label",
      "description",
      "parameters",
      "execute",
    ]);
  });

  it("accepts zod/mini schemas", () => {
    const tool = defineTool({ name: "m", description: "", parameters: zm.object({ n: zm.number() }), execute: async () => done });
    expect(toolDeclaration(tool).parameters).toEqual({ type: "object", properties: { n: { type: "number" } }, required: ["n"] });
  });

  it("rejects definitions without a name, execute or parameters", () => {
    expect(() => defineTool({ name: "", description: "", parameters: {}, execute: async () => done })).toThrow(TypeError);
    expect(() => defineTool({ name: "x", description: "", parameters: {} } as never)).toThrow(/execute/);
    expect(() => defineTool({ name: "x", description: "", parameters: undefined, execute: async () => done } as never)).toThrow(/parameters/);
  });
});

describe("toolDeclaration / declarationKey", () => {
  it("exports zod as input-side JSON Schema without $schema: defaults and optionals are not required", () => {
    const tool = defineTool({
      name: "read",
      description: "Read",
      parameters: z.object({ path: z.string().describe("file"), limit: z.number().default(10), at: z.date().optional() }),
      execute: async () => done,
    });
    expect(toolDeclaration(tool)).toEqual({
      name: "read",
      description: "Read",
      parameters: {
        type: "object",
        properties: { path: { type: "string", description: "file" }, limit: { type: "number", default: 10 }, at: {} },
        required: ["path"],
      },
    });
  });

  it("passes a JSON Schema through as the same object", () => {
    const parameters = { type: "object", properties: {} };
    expect(toolDeclaration({ name: "x", description: "", parameters }).parameters).toBe(parameters);
  });

  it("R30: memoizes per tool (same object, serialized once) and recomputes when the tool changes", () => {
    const tool = defineTool({ name: "t", description: "one", parameters: z.object({ a: z.string() }), execute: async () => done });
    const first = toolDeclaration(tool);
    expect(toolDeclaration(tool)).toBe(first);
    expect(declarationKey(tool)).toBe(JSON.stringify({ name: "t", description: "one", parameters: first.parameters }));
    expect(declarationKey(tool)).toBe(toolDeclKey(first));
    tool.description = "two";
    const second = toolDeclaration(tool);
    expect(second).not.toBe(first);
    expect(second.description).toBe("two");
    expect(second.parameters).toBe(first.parameters); // the zod export is memoized per schema
    expect(declarationKey(tool)).toContain('"description":"two"');
  });
});

describe("defineTool passes the loop's per-tool settings through (R13, R65, R73, R82)", () => {
  it("R82, R65, R73, R13: replay, timeoutMs, cancelSiblingsOnError and needsApproval reach the tool; an undeclared one stays absent", async () => {
    const { defineTool: define, Agent, scriptedModel, scriptedStreamFn, text, toolCall } = await import("../../src/index.js");
    const { z } = await import("zod");
    const needsApproval = (args: { path: string }) => args.path.startsWith("/etc");
    const write = define({
      name: "write",
      description: "writes",
      parameters: z.object({ path: z.string() }),
      replay: "never",
      timeoutMs: 5_000,
      cancelSiblingsOnError: true,
      needsApproval,
      execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
    });
    expect(write).toMatchObject({ replay: "never", timeoutMs: 5_000, cancelSiblingsOnError: true, needsApproval });
    const plain = define({ name: "plain", description: "p", parameters: z.object({}), execute: async () => ({ content: [], details: {} }) });
    expect(Object.keys(plain)).not.toContain("needsApproval");
    // And the run honours it: the call waits for approval.
    const agent = new Agent({
      initialState: { model: scriptedModel, tools: [write] },
      streamFn: scriptedStreamFn([{ content: [toolCall("write", { path: "/etc/x" }, "w1")] }, { content: [text("done")] }]),
    });
    const requested = new Promise<string>((resolve) =>
      agent.subscribe((event) => void (event.type === "tool_approval_requested" && resolve(event.approvalId)), { runtimeEvents: true }),
    );
    const run = agent.prompt("go");
    agent.approve(await requested);
    await run;
    expect(agent.state.messages.find((message) => message.role === "toolResult")).toMatchObject({ toolCallId: "w1", isError: false });
  });
});

describe("defineTool passes isConcurrencySafe through (R70)", () => {
  it("R70: the predicate reaches the tool", async () => {
    const { defineTool: define } = await import("../../src/index.js");
    const { z } = await import("zod");
    const isConcurrencySafe = () => true;
    const read = define({ name: "read", description: "r", parameters: z.object({}), isConcurrencySafe, execute: async () => ({ content: [], details: {} }) });
    expect(read.isConcurrencySafe).toBe(isConcurrencySafe);
  });
});
