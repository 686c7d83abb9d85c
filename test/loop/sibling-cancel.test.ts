/**
 * SPEC R73: a tool that declares `cancelSiblingsOnError`: when its own `execute` fails, the
 * batch's running calls are aborted and settle at once, the calls not yet started are not run,
 * and all of them get `Cancelled: sibling tool call NAME failed`. The turn goes on.
 */
import { describe, expect, it } from "vitest";
import { runAgentLoop, scriptedStreamFn, text, toolCall, type AgentEvent, type AgentTool } from "../../src/index.js";
import { baseConfig, ok, project, tool, user, withoutUpdates } from "./helpers.js";

/** When each stubborn tool's signal aborted, among the runs' turn ends. */
const order: string[] = [];

/** A tool that runs until its signal aborts, and then never settles (the cancel alone ends it). */
function stubborn(name: string) {
  const seen: { aborted?: boolean } = {};
  const t: AgentTool = tool(name, (_id, _args, signal) => {
    signal?.addEventListener("abort", () => {
      seen.aborted = true;
      order.push(`abort:${name}`);
    });
    return new Promise(() => {});
  });
  return { tool: t, seen };
}

const failing = tool("deploy", async () => {
  throw new Error("deploy failed");
}, { cancelSiblingsOnError: true });

const cancelled = "Cancelled: sibling tool call deploy failed";

async function run(calls: string[], tools: AgentTool[], toolExecution: "parallel" | "sequential" = "parallel", overrides = {}) {
  const stream = scriptedStreamFn([{ content: calls.map((name, i) => toolCall(name, {}, `c${i}`)) }, { content: [text("carrying on")] }]);
  const events: AgentEvent[] = [];
  order.length = 0;
  const sink = (event: AgentEvent) => {
    events.push(event);
    if (event.type === "turn_end") order.push("turn_end");
  };
  const output = await runAgentLoop([user("go")], { messages: [], tools }, baseConfig({ toolExecution, ...overrides }), sink, undefined, stream);
  const results = output.filter((m) => m.role === "toolResult").map((m) => `${(m as { toolName: string }).toolName}:${(m as { content: { text: string }[] }).content[0].text}`);
  return { events: withoutUpdates(events).map(project), output, results, stream };
}

describe("R73: cancelSiblingsOnError", () => {
  it("R73: parallel: the running siblings are aborted and settle at once with the cancelled result; results in source order; the turn goes on", async () => {
    const a = stubborn("slow_a");
    const c = stubborn("slow_c");
    const { events, results, stream } = await run(["slow_a", "deploy", "slow_c"], [a.tool, failing, c.tool]);
    expect(events).toEqual([
      "agent_start",
      "turn_start",
      // R30: the tools' declaration, then the prompt.
      "message_start:system",
      "message_end:system",
      "message_start:user(go)",
      "message_end:user(go)",
      "message_start:assistant(stop)",
      "message_end:assistant(toolUse)",
      "tool_start:slow_a",
      "tool_start:deploy",
      "tool_start:slow_c",
      "tool_end:deploy!",
      "tool_end:slow_a!",
      "tool_end:slow_c!",
      "message_start:toolResult(slow_a!)",
      "message_end:toolResult(slow_a!)",
      "message_start:toolResult(deploy!)",
      "message_end:toolResult(deploy!)",
      "message_start:toolResult(slow_c!)",
      "message_end:toolResult(slow_c!)",
      "turn_end:assistant(toolUse)+3",
      "turn_start",
      "message_start:assistant(stop)",
      "message_end:assistant(stop)",
      "turn_end:assistant(stop)+0",
      "agent_end:7",
    ]);
    expect(results).toEqual([`slow_a:${cancelled}`, "deploy:deploy failed", `slow_c:${cancelled}`]);
    expect([a.seen.aborted, c.seen.aborted]).toEqual([true, true]);
    // Cancelled when the sibling failed, not when the run ended.
    expect(order).toEqual(["abort:slow_a", "abort:slow_c", "turn_end", "turn_end"]);
    expect(stream.calls).toHaveLength(2);
  });

  it("R73: sequential: the later calls are not run; each gets its start, end and the cancelled result", async () => {
    let ran = 0;
    const later = tool("later", async () => (ran++, ok("ran")));
    const { events, results } = await run(["deploy", "later", "later"], [failing, later], "sequential");
    expect(ran).toBe(0);
    expect(results).toEqual(["deploy:deploy failed", `later:${cancelled}`, `later:${cancelled}`]);
    expect(events.slice(8, 20)).toEqual([
      "tool_start:deploy",
      "tool_end:deploy!",
      "message_start:toolResult(deploy!)",
      "message_end:toolResult(deploy!)",
      "tool_start:later",
      "tool_end:later!",
      "message_start:toolResult(later!)",
      "message_end:toolResult(later!)",
      "tool_start:later",
      "tool_end:later!",
      "message_start:toolResult(later!)",
      "message_end:toolResult(later!)",
    ]);
    expect(events.at(-1)).toBe("agent_end:7");
  });

  it("R73: a validation failure or a block of that tool cancels nothing; nor does a failure of a tool without the flag", async () => {
    const strict: AgentTool = { ...failing, parameters: { type: "object", properties: { n: { type: "number" } }, required: ["n"] } };
    const { results } = await run(["deploy", "ok"], [strict, tool("ok")]);
    expect(results[1]).toBe("ok:ok done");
    const blocked = await run(["deploy", "ok"], [failing, tool("ok")], "parallel", { beforeToolCall: async ({ toolCall: call }: { toolCall: { name: string } }) => (call.name === "deploy" ? { block: true } : undefined) });
    expect(blocked.results[1]).toBe("ok:ok done");
    const plain = tool("deploy", async () => {
      throw new Error("deploy failed");
    });
    expect((await run(["deploy", "ok"], [plain, tool("ok")])).results[1]).toBe("ok:ok done");
  });

  it("R73: a call in afterToolCall when a sibling fails is cancelled too", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slowFail = tool("deploy", async () => {
      await gate;
      throw new Error("deploy failed");
    }, { cancelSiblingsOnError: true });
    const { results } = await run(["ok", "deploy"], [tool("ok"), slowFail], "parallel", {
      afterToolCall: async ({ toolCall: call }: { toolCall: { name: string } }) => {
        if (call.name === "ok") {
          release();
          return new Promise<undefined>(() => {});
        }
        return undefined;
      },
    });
    expect(results).toEqual([`ok:${cancelled}`, "deploy:deploy failed"]);
  });
});
