/**
 * Issue 17 item 7: the terminal agent's Agent gets retries (R60), output-limit recovery (R61),
 * compaction on overflow (R62) and an abort grace (R67) by default, and each flag turns its
 * mechanism off or tunes it; proactive compaction is opt-in (`--compact-at`). The Agent
 * class is wrapped to keep the options the CLI constructs it with; the run itself is the real
 * offline demo (one turn).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseCliArgs, type CliOptions } from "../../src/node/cli/args.js";
import { recoveryConfig } from "../../src/node/cli/recovery.js";
import { scriptedModel, type AgentMessage, type AssistantMessage, type Compactor } from "../../src/index.js";
import { SUMMARY_HEADER, streamCompletion } from "../../src/recovery/index.js";
import { offlineDemoModel, offlineDemoStreamFn } from "../../src/node/cli/offline-demo.js";
import { fakeIO, makeRepo } from "./fixture.js";

const constructed = vi.hoisted(() => [] as Record<string, unknown>[]);
vi.mock("../../src/index.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/index.js")>();
  class RecordingAgent extends actual.Agent {
    constructor(options: ConstructorParameters<typeof actual.Agent>[0]) {
      constructed.push({ ...options });
      super(options);
    }
  }
  return { ...actual, Agent: RecordingAgent };
});
const { runCli } = await import("../../src/node/cli/app.js");

let root: string;
let cleanup: () => void;
beforeAll(() => ({ root, cleanup } = makeRepo()));
afterAll(() => cleanup());

const options = (...argv: string[]): CliOptions => {
  const parsed = parseCliArgs([...argv, "hi"]);
  if (parsed.kind !== "run") throw new Error(JSON.stringify(parsed));
  return parsed.options;
};

/** The recovery keys of the options the CLI built its Agent with, after a one-turn offline run. */
async function agentRecovery(...flags: string[]): Promise<Record<string, unknown>> {
  constructed.length = 0;
  const { io, stderr } = fakeIO(root);
  expect(await runCli(["--offline", "--max-turns", "1", ...flags, "summarize this repository"], io)).toBe(0);
  expect(stderr()).toBe("");
  expect(constructed).toHaveLength(1);
  const { retry, outputLimit, abortGraceMs, compact } = constructed[0]!;
  return Object.fromEntries(Object.entries({ retry, outputLimit, abortGraceMs, compact }).filter(([, value]) => value !== undefined));
}

/** What the CLI's default compaction is: the loop's built-in compactor, with nothing else set. */
const compaction = (extra: Record<string, unknown> = {}) => ({ compactor: expect.any(Function), ...extra });

const user = (content: string, timestamp: number): AgentMessage => ({ role: "user", content, timestamp });
const said = (text: string, timestamp: number): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: scriptedModel.api,
  provider: scriptedModel.provider,
  model: scriptedModel.id,
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "stop",
  timestamp,
});

/** The compactor's behaviour over three turns: the summarizing compactor's (older turns summarized, the last 2 kept). */
async function compacts(compactor: Compactor): Promise<string[]> {
  const messages = [user("one", 1), said("1", 2), user("two", 3), said("2", 4), user("three", 5), said("3", 6)];
  const result = await compactor(
    { messages, model: scriptedModel, reason: "overflow", estimatedTokens: 0, complete: async () => said("the summary", 7) },
    new AbortController().signal,
  );
  return result.map((message) => (typeof message.content === "string" ? message.content : (message as AssistantMessage).content.map((block) => ("text" in block ? block.text : "")).join("")));
}

describe("issue 17 item 7: the CLI's recovery settings", () => {
  it("R60, R61, R62, R67: recoveryConfig gives the loop's defaults, or leaves a mechanism out when its flag turns it off", () => {
    expect(recoveryConfig(options())).toEqual({ retry: {}, outputLimit: {}, compact: compaction(), abortGraceMs: 5000 });
    expect(recoveryConfig(options("--max-attempts", "3", "--abort-grace-ms", "250", "--compact-at", "90000"))).toEqual({
      retry: { maxAttempts: 3 },
      outputLimit: {},
      compact: compaction({ thresholdTokens: 90_000 }),
      abortGraceMs: 250,
    });
    expect(recoveryConfig(options("--no-retry", "--no-output-recovery", "--no-abort-grace", "--no-compact"))).toEqual({});
  });

  it("R62: the default compactor is the built-in summarizingCompactor (older turns summarized, the last 2 turns kept)", async () => {
    const { compact } = recoveryConfig(options());
    expect(await compacts(compact!.compactor)).toEqual([`${SUMMARY_HEADER}\n\nthe summary`, "two", "2", "three", "3"]);
  });

  it("R60, R61, R62, R67: the CLI's Agent is built with retries, output-limit recovery, compaction and a 5 s grace by default", async () => {
    expect(await agentRecovery()).toEqual({ retry: {}, outputLimit: {}, compact: compaction(), abortGraceMs: 5000 });
    expect(await agentRecovery("--compact-at", "2000")).toEqual({ retry: {}, outputLimit: {}, compact: compaction({ thresholdTokens: 2000 }), abortGraceMs: 5000 });
  });

  it("R60, R61, R62, R67: and without them when the flags say so", async () => {
    expect(await agentRecovery("--no-retry", "--no-output-recovery", "--no-abort-grace", "--no-compact")).toEqual({});
    expect(await agentRecovery("--no-retry", "--abort-grace-ms", "0", "--no-compact")).toEqual({ outputLimit: {}, abortGraceMs: 0 });
  });
});

describe("issue 17 item 7: proactive compaction in the offline demo (R62)", () => {
  it("R62: the demo model answers the CLI compactor's summary request with a summary of the requests and tools", async () => {
    const { compact } = recoveryConfig(options("--compact-at", "10"));
    const call = (id: string, name: string, timestamp: number): AssistantMessage => ({
      ...said("", timestamp),
      content: [{ type: "toolCall", id, name, arguments: { path: "." } }],
      stopReason: "toolUse",
    });
    const result = (id: string, toolName: string, timestamp: number): AgentMessage => ({ role: "toolResult", toolCallId: id, toolName, content: [{ type: "text", text: "ok" }], isError: false, timestamp });
    const messages: AgentMessage[] = [
      user("summarize this repository", 1),
      call("a", "list_files", 2),
      result("a", "list_files", 3),
      call("b", "list_files", 4),
      result("b", "list_files", 5),
      said("Here is what I found.", 6),
      user("two", 7),
      said("2", 8),
      user("three", 9),
      said("3", 10),
    ];
    const complete = streamCompletion(offlineDemoStreamFn({ delayMs: 0 }), offlineDemoModel, {});
    const compacted = await compact!.compactor({ messages, model: offlineDemoModel, reason: "threshold", estimatedTokens: 100, complete }, new AbortController().signal);

    expect(compacted.slice(1)).toEqual(messages.slice(6));
    expect(compacted[0]).toMatchObject({
      role: "user",
      content: `${SUMMARY_HEADER}\n\nThe user asked: "summarize this repository".\nThe assistant used 2 tool calls (list_files ×2) and answered from their results.`,
    });
  });
});
