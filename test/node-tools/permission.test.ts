import { describe, expect, it } from "vitest";
import type { BeforeToolCallContext } from "../../src/index.js";
import { permissionPolicy } from "../../src/node/index.js";

const context = (name: string, args: unknown = { path: "a.txt", content: "x" }) =>
  ({ toolCall: { type: "toolCall", id: "c1", name, arguments: args }, args, assistantMessage: {}, context: { messages: [] } }) as unknown as BeforeToolCallContext;

describe("permission policy (beforeToolCall)", () => {
  it("leaves tools that need no permission alone", async () => {
    expect(await permissionPolicy({ decide: "deny" })(context("read_file"))).toBeUndefined();
  });

  it("allow (--yes) lets write_file run", async () => {
    expect(await permissionPolicy({ decide: "allow" })(context("write_file"))).toBeUndefined();
  });

  it("deny (no terminal to ask) blocks it with the reason the model sees", async () => {
    const policy = permissionPolicy({ decide: "deny", denyReason: () => "no terminal; run with --yes" });
    expect(await policy(context("write_file"))).toEqual({ block: true, reason: "no terminal; run with --yes" });
    expect(await permissionPolicy({ decide: "deny" })(context("write_file"))).toEqual({
      block: true,
      reason: "Permission denied: the user did not allow write_file.",
    });
  });

  it("asks, with the request, and follows the answer; a failing question refuses", async () => {
    const asked: unknown[] = [];
    const ask = (answer: boolean | { allow: boolean; reason?: string }) =>
      permissionPolicy({
        decide: async (request) => {
          asked.push(request);
          return answer;
        },
      });
    expect(await ask(true)(context("write_file"))).toBeUndefined();
    expect(await ask(false)(context("write_file"))).toEqual({ block: true, reason: "Permission denied: the user did not allow write_file." });
    expect(await ask({ allow: false, reason: "not today" })(context("write_file"))).toEqual({ block: true, reason: "not today" });
    expect(asked[0]).toEqual({ toolName: "write_file", toolCallId: "c1", args: { path: "a.txt", content: "x" } });
    const failing = permissionPolicy({ decide: async () => Promise.reject(new Error("tty closed")) });
    expect(await failing(context("write_file"))).toMatchObject({ block: true });
  });

  it("guards the tools it is given", async () => {
    const policy = permissionPolicy({ decide: "deny", tools: ["bash"] });
    expect(await policy(context("write_file"))).toBeUndefined();
    expect(await policy(context("bash"))).toMatchObject({ block: true });
  });
});
