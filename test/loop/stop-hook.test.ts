/**
 * SPEC R64: a stop hook needs no mechanism of its own: `finishTurn` returning `{action:
 * "continue"}` plus `prepareNextTurn` returning `messages` hands the hook's feedback to the model
 * (R10, R4a), and `budget.maxTurns` bounds it (R63).
 *
 * The two regions between `README example (n/2)` and `end` are docs/guides/recovery.md's "Stop hooks (R64)"
 * example, verbatim but for its imports; the first test checks that, so the two cannot drift
 * apart. In the second region `console.log` and `agentLoop` are the test's recording stand-ins.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  agentLoop as loop,
  defaultConvertToLlm,
  defineTool,
  scriptedModel,
  scriptedStreamFn,
  text,
  toolCall,
  type AgentEvent,
  type AgentLoopConfig,
  type AgentMessage,
} from "../../src/index.js";
import { entries, structureProblems, summary } from "./helpers.js";

// README example (1/2)
/** A stop hook: when the model ends its answer, run `check`; while it fails, its output is the next user message. */
function stopHook(check: () => Promise<string | undefined>): Pick<AgentLoopConfig, "finishTurn" | "prepareNextTurn"> {
  let feedback: string | undefined;
  return {
    finishTurn: async ({ message }) => {
      // Only a finished answer is checked: a turn with tool calls goes on anyway, a failed one ends the run (R6).
      feedback = message.stopReason === "stop" ? await check() : undefined;
      return feedback === undefined ? undefined : { action: "continue" };
    },
    // Before the next turn: the check's output, appended with its message events (R4a).
    prepareNextTurn: () => (feedback === undefined ? undefined : { messages: [{ role: "user", content: feedback, timestamp: Date.now() }] }),
  };
}
// end

/** The example's code in this file: both regions, dedented, separated by a blank line. */
function exampleInTest(): string {
  const source = readFileSync(fileURLToPath(import.meta.url), "utf8");
  const regions = [...source.matchAll(/\/\/ README example \(\d\/2\)\n([\s\S]*?)\n\s*\/\/ end\n/g)].map((match) =>
    match[1]!.replace(/^ {4}/gm, ""),
  );
  if (regions.length !== 2) throw new Error(`expected 2 README example regions in the test, found ${regions.length}`);
  return regions.join("\n\n");
}

/** The docs example (docs/guides/recovery.md): the first ts block after the "Stop hooks (R64)" heading, without its imports. */
function exampleInReadme(): string {
  const readme = readFileSync(fileURLToPath(new URL("../../docs/guides/recovery.md", import.meta.url)), "utf8");
  const at = readme.indexOf("## Stop hooks (R64)");
  if (at < 0) throw new Error("docs/guides/recovery.md: no ## Stop hooks (R64) section");
  const block = /```ts\n([\s\S]*?)\n```/.exec(readme.slice(at))?.[1];
  if (block === undefined) throw new Error("docs/guides/recovery.md: no ts block under ## Stop hooks (R64)");
  return block.replace(/^(import [^\n]*\n)+\n/, "");
}

/** Runs the README example's second part, recording what it prints and every event of its run. */
async function runExample() {
  const log: string[] = [];
  const console = { log: (...args: unknown[]) => log.push(args.join(" ")) };
  const events: AgentEvent[] = [];
  let added: Promise<AgentMessage[]> | undefined;
  // The stream buffers its events for the first subscriber: this recorder, attached before the
  // example's own `for await` (which then sees the events still to come, agent_end among them).
  const agentLoop: typeof loop = (...args) => {
    const stream = loop(...args);
    stream.subscribe((event) => void events.push(event));
    added = stream.result();
    return stream;
  };

  // README example (2/2)
    // The workspace and the check the stop hook runs (`npm test` in a real app).
    const files = new Map([["sum.js", "export const sum = (a, b) => a - b;"]]);
    const runTests = async () => (files.get("sum.js")!.includes("a + b") ? undefined : "The tests still fail: sum(1, 2) returned -1, expected 3. Fix them.");

    const writeFile = defineTool({
      name: "write_file",
      description: "Write a file",
      parameters: z.object({ path: z.string(), content: z.string() }),
      execute: async (_id, { path, content }) => {
        files.set(path, content);
        return { content: [{ type: "text", text: `wrote ${path}` }], details: {} };
      },
    });

    const model = scriptedStreamFn([
      { content: [text("Done: sum.js is written.")] },
      { content: [toolCall("write_file", { path: "sum.js", content: "export const sum = (a, b) => a + b;" })] },
      { content: [text("Fixed: sum adds now.")] },
    ]);
    const run = agentLoop(
      [{ role: "user", content: "Make the tests pass.", timestamp: Date.now() }],
      { messages: [], tools: [writeFile] },
      // budget.maxTurns bounds the hook: a model that never gets it right ends with reason "max_turns" (R63).
      { model: scriptedModel, convertToLlm: defaultConvertToLlm, ...stopHook(runTests), budget: { maxTurns: 5 } },
      undefined,
      model,
    );
    for await (const event of run) if (event.type === "agent_end") console.log(event.reason); // "completed"
  // end

  return { log, events, messages: await added!, files, requests: model.calls.length };
}

const FAILING = "The tests still fail: sum(1, 2) returned -1, expected 3. Fix them.";

/** The example's stopHook over a model that never fixes anything, bounded by `maxTurns`. */
async function runUntilBudget(maxTurns: number) {
  const events: AgentEvent[] = [];
  let checks = 0;
  const model = scriptedStreamFn(Array.from({ length: 10 }, (_, i) => ({ content: [text(`Done (${i + 1}).`)] })));
  const stream = loop(
    [{ role: "user", content: "Make the tests pass.", timestamp: 1 }],
    { messages: [] },
    { model: scriptedModel, convertToLlm: defaultConvertToLlm, ...stopHook(async () => (checks++, FAILING)), budget: { maxTurns } },
    undefined,
    model,
  );
  stream.subscribe((event) => void events.push(event));
  return { events, messages: await stream.result(), checks: () => checks, requests: model.calls.length };
}

describe("R64: a stop hook from finishTurn + prepareNextTurn, bounded by budget.maxTurns", () => {
  it("R64: this test runs the README's example verbatim", () => {
    expect(exampleInTest()).toBe(exampleInReadme());
  });

  it("R64: while the check fails its output is the next user message; once it passes the run completes", async () => {
    const { log, events, messages, files, requests } = await runExample();

    expect(log).toEqual(["completed"]);
    expect(requests).toBe(3);
    expect(files.get("sum.js")).toBe("export const sum = (a, b) => a + b;");
    expect(structureProblems(events)).toEqual([]);
    expect(entries(events)).toEqual([
      "agent_start",
      "turn_start",
      "message_start:system",
      "message_end:system",
      "message_start:user(Make the tests pass.)",
      "message_end:user(Make the tests pass.)",
      "message_start:assistant",
      "message_end:assistant(stop)",
      // finishTurn ran the tests: they fail, so it said continue …
      "turn_end:assistant(stop)+0",
      // … and prepareNextTurn handed their output to the model.
      "turn_start",
      `message_start:user(${FAILING})`,
      `message_end:user(${FAILING})`,
      "message_start:assistant",
      "message_end:assistant(toolUse)",
      "tool_start:write_file",
      "tool_end:write_file",
      "message_start:toolResult(write_file)",
      "message_end:toolResult(write_file)",
      // A turn with tool calls is not checked; its results go back to the model as usual.
      "turn_end:assistant(toolUse)+1",
      "turn_start",
      "message_start:assistant",
      "message_end:assistant(stop)",
      // The tests pass: finishTurn keeps normal scheduling, and nothing else asks for a request.
      "turn_end:assistant(stop)+0",
      "agent_end:7",
    ]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "completed" });
    expect(messages.map(summary)).toEqual([
      "system( +write_file)",
      "user(Make the tests pass.)",
      "assistant(stop)[Done: sum.js is written.]",
      `user(${FAILING})`,
      "assistant(toolUse)[call write_file]",
      "toolResult(write_file):wrote sum.js",
      "assistant(stop)[Fixed: sum adds now.]",
    ]);
    // The feedback is an ordinary user message (the model sees it as the user's).
    expect(messages[3]).toEqual({ role: "user", content: FAILING, timestamp: expect.any(Number) });
  });

  it("R64: a check that never passes is bounded by budget.maxTurns: agent_end{reason: max_turns}", async () => {
    const { events, messages, checks, requests } = await runUntilBudget(3);

    expect(requests).toBe(3);
    expect(checks()).toBe(3);
    expect(structureProblems(events)).toEqual([]);
    const answer = ["message_start:assistant", "message_end:assistant(stop)", "turn_end:assistant(stop)+0"];
    const feedback = ["turn_start", `message_start:user(${FAILING})`, `message_end:user(${FAILING})`];
    expect(entries(events)).toEqual([
      "agent_start",
      "turn_start",
      "message_start:user(Make the tests pass.)",
      "message_end:user(Make the tests pass.)",
      ...answer,
      ...feedback,
      ...answer,
      ...feedback,
      ...answer,
      // The third check failed too and said continue, but three turns are the budget: the run
      // ends right after turn_end, and the third feedback is never injected.
      "agent_end:6",
    ]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "max_turns" });
    expect(messages.map(summary)).toEqual([
      "user(Make the tests pass.)",
      "assistant(stop)[Done (1).]",
      `user(${FAILING})`,
      "assistant(stop)[Done (2).]",
      `user(${FAILING})`,
      "assistant(stop)[Done (3).]",
    ]);
  });
});
