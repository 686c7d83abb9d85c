/**
 * Differential tests against the reference, @earendil-works/pi-agent-core 1.6.0, run as a black
 * box: its loop with a stream function that answers at once, and its Agent's replayed state.
 * (Its package asks for Node >= 22.19, but these entry points run on Node 20.)
 */
import { Agent, runAgentLoop } from "@earendil-works/pi-agent-core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AgentMessage, AssistantMessage, SystemMessage, TextContent, ToolDecl } from "../../src/types.js";
import {
  createDeclaredToolSet,
  currentSystemMessage,
  declareToolChanges,
  keyedToolDecl,
  replayTranscript,
  systemMessageFor,
} from "../../src/transcript/index.js";
import { decl, sys, user } from "./helpers.js";

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const NOW = 42;

const model = {
  id: "m",
  name: "m",
  api: "fake",
  provider: "fake",
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1000,
  maxTokens: 100,
};
const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
const answer: AssistantMessage = {
  role: "assistant",
  content: [{ type: "text", text: "ok" }],
  api: "fake",
  provider: "fake",
  model: "m",
  usage: { ...zero, totalTokens: 0, cost: { ...zero, total: 0 } },
  stopReason: "stop",
  timestamp: 5,
};
const streamFn = () => ({
  async *[Symbol.asyncIterator]() {
    yield { type: "done" as const, reason: "stop" as const, message: answer };
  },
  result: async () => answer,
});

function agentTool(d: ToolDecl) {
  return { ...d, label: d.name, execute: async () => ({ content: [], details: {} }) };
}

/** The messages the reference injects for a run: everything it added but the assistant answer. */
async function referenceInjected(transcript: AgentMessage[], prompts: AgentMessage[], tools: ToolDecl[]): Promise<AgentMessage[]> {
  const added = await runAgentLoop(
    prompts as never,
    { systemPrompt: "", messages: [...transcript], tools: tools.map(agentTool) } as never,
    { model, convertToLlm: (m: unknown) => m } as never,
    () => {},
    undefined,
    streamFn as never,
  );
  expect(added.at(-1)).toMatchObject({ role: "assistant" });
  return added.slice(0, -1) as AgentMessage[];
}

function ourInjected(transcript: AgentMessage[], prompts: AgentMessage[], tools: ToolDecl[]): AgentMessage[] {
  return declareToolChanges({
    transcriptDeclared: createDeclaredToolSet(transcript),
    pending: prompts,
    tools: tools.map(keyedToolDecl),
    now: NOW,
  });
}

/** Inserted declarations carry the current time; compare everything else. */
function comparable(messages: AgentMessage[], prompts: AgentMessage[]) {
  return messages.map((m) => (m.role === "system" && !prompts.includes(m) ? { ...m, timestamp: 0 } : m));
}

async function expectSameAsReference(transcript: AgentMessage[], prompts: AgentMessage[], tools: ToolDecl[]) {
  const ours = ourInjected(transcript, prompts, tools);
  const theirs = await referenceInjected(transcript, prompts, tools);
  expect(comparable(ours, prompts)).toEqual(comparable(theirs, prompts));
  // Same objects kept (identity), same copies made.
  expect(prompts.map((p) => ours.includes(p))).toEqual(prompts.map((p) => theirs.includes(p)));
  // An inserted declaration (the only way the list grows) comes first, stamped `now`.
  if (ours.length > prompts.length) expect(ours[0]).toMatchObject({ role: "system", content: "", timestamp: NOW });
}

const scenarios: [string, AgentMessage[], AgentMessage[], ToolDecl[]][] = [
  ["new transcript with a tool", [], [user()], [decl("a")]],
  ["nothing declared, nothing to declare", [], [user()], []],
  ["no change", [sys("p", { toolsAdded: [decl("a")] })], [user()], [decl("a")]],
  ["removed", [sys("p", { toolsAdded: [decl("c"), decl("a"), decl("b")] })], [user()], [decl("b")]],
  ["changed definition", [sys("p", { toolsAdded: [decl("a"), decl("b")] })], [user()], [decl("a", "new"), decl("b"), decl("c")]],
  ["pending system, no change", [sys("p", { toolsAdded: [decl("a")] })], [sys("x"), user()], [decl("a")]],
  ["pending system with empty lists", [sys("p", { toolsAdded: [decl("a")] })], [sys("x", { toolsAdded: [], toolsRemoved: [] }), user()], [decl("a")]],
  ["pending system declaring the delta", [sys("p", { toolsAdded: [decl("a")] })], [sys("x", { toolsAdded: [decl("b")] }), user()], [decl("a"), decl("b")]],
  ["pending system with bogus declarations", [sys("p", { toolsAdded: [decl("a")] })], [sys("x", { toolsAdded: [decl("z")], toolsRemoved: [{ name: "a" }] }), user()], [decl("a")]],
  ["two pending system messages", [sys("p", { toolsAdded: [decl("a")] })], [sys("x", { toolsAdded: [decl("b")] }), user(), sys("y", { toolsAdded: [decl("q")] })], [decl("a"), decl("c")]],
  ["pending system after the user message", [sys("p", { toolsAdded: [decl("a")] })], [user(), sys("y", { sections: { s: "S" } })], [decl("a"), decl("c")]],
  ["several user messages", [sys("p", { toolsAdded: [decl("a")] })], [user("1"), user("2")], [decl("c")]],
  ["no prompts", [sys("p")], [], [decl("a")]],
];

describe("differential: R30 against pi-agent-core", () => {
  for (const [name, transcript, prompts, tools] of scenarios) {
    it(`R30: ${name}`, async () => {
      await expectSameAsReference(transcript, prompts, tools);
    });
  }

  const declArb: fc.Arbitrary<ToolDecl> = fc.record({
    name: fc.constantFrom("a", "b", "c", "d"),
    description: fc.constantFrom("x", "y"),
    parameters: fc.constantFrom<Record<string, unknown>>({ type: "object" }, { type: "object", properties: { p: { type: "string" } } }),
  });
  const systemArb = fc
    .record(
      {
        content: fc.constantFrom("", "s"),
        toolsAdded: fc.array(declArb, { maxLength: 3 }),
        toolsRemoved: fc.array(fc.record({ name: fc.constantFrom("a", "b", "c", "d", "z") }), { maxLength: 2 }),
        timestamp: fc.nat(),
      },
      { requiredKeys: ["content", "timestamp"] },
    )
    .map((m): SystemMessage => ({ role: "system", ...m }));
  const messageArb = fc.oneof(systemArb as fc.Arbitrary<AgentMessage>, fc.constant<AgentMessage>(user()));

  it("R30: random transcripts, prompts and tool sets inject what the reference injects", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(messageArb, { maxLength: 6 }),
        fc.array(messageArb, { maxLength: 4 }),
        // Unique names: with duplicates the reference declares both and redeclares next request.
        fc.uniqueArray(declArb, { selector: (d) => d.name, maxLength: 4 }),
        async (transcript, prompts, tools) => {
          // Fresh objects per run so identity checks cannot leak between the two sides' inputs.
          await expectSameAsReference(transcript, [...prompts].map((p) => ({ ...p })), tools);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

function referenceAgent(initialState: Record<string, unknown>) {
  return new Agent({ initialState: { model, ...initialState }, streamFn: streamFn } as never);
}

describe("differential: replay against pi-agent-core's Agent", () => {
  const text = fc.constantFrom("", "base", " ", "x\ny", "more");
  const contentArb: fc.Arbitrary<SystemMessage["content"]> = fc.oneof(
    text,
    fc.array(text.map((t): TextContent => ({ type: "text", text: t })), { maxLength: 3 }),
  );
  const sectionsArb = fc
    .array(fc.tuple(fc.constantFrom("a", "b", "c", "10"), fc.constantFrom<string | null>("", "S1", "S2", " ", null)), { maxLength: 3 })
    .map((entries) => Object.fromEntries(entries) as Record<string, string | null>);
  const declArb: fc.Arbitrary<ToolDecl> = fc.record({
    name: fc.constantFrom("a", "b", "c"),
    description: fc.constantFrom("x", "y"),
    parameters: fc.constant({ type: "object" }),
  });
  const systemArb = fc
    .record(
      {
        content: contentArb,
        sections: sectionsArb,
        toolsAdded: fc.array(declArb, { maxLength: 2 }),
        toolsRemoved: fc.array(fc.record({ name: fc.constantFrom("a", "b", "c") }), { maxLength: 2 }),
        timestamp: fc.nat(),
      },
      { requiredKeys: ["content", "timestamp"] },
    )
    .map((m): SystemMessage => ({ role: "system", ...m }));
  const transcriptArb = fc.array(fc.oneof(systemArb as fc.Arbitrary<AgentMessage>, fc.constant<AgentMessage>(user())), { maxLength: 6 });

  it("R50: systemPrompt replays like the reference's Agent.state.systemPrompt", () => {
    fc.assert(
      fc.property(transcriptArb, (messages) => {
        expect(replayTranscript(messages).systemPrompt).toBe(referenceAgent({ messages }).state.systemPrompt);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it("R54: currentSystemMessage is the single system message the reference's reset() keeps", () => {
    fc.assert(
      fc.property(transcriptArb, (messages) => {
        const agent = referenceAgent({ messages });
        agent.reset();
        const kept = agent.state.messages as AgentMessage[];
        const ours = currentSystemMessage(messages);
        expect(ours === undefined ? [] : [ours]).toEqual(kept);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it("R50: systemMessageFor is the leading message the reference builds from initialState", () => {
    for (const [prompt, tools] of [
      ["hi", [decl("a"), decl("b")]],
      ["hi", []],
      ["", [decl("a")]],
      ["", []],
    ] as [string, ToolDecl[]][]) {
      const agent = referenceAgent({ systemPrompt: prompt, tools: tools.map(agentTool) });
      const ours = systemMessageFor(prompt, tools);
      expect(ours === undefined ? [] : [ours]).toEqual(agent.state.messages);
    }
  });
});
