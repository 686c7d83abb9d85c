/**
 * R62, property test of the built-in compactor over random transcripts: parallel tool calls with
 * results in any order, steering messages between a call and its result, system messages with
 * tool declarations anywhere, app-defined messages, recovery messages, long outputs; random
 * `keepTurns` and `chunkTokens`. Whatever it returns keeps every call with its result, ends with
 * the input's own messages from a turn start, replays to the same prompt and tools, and every
 * summary request fits its chunk and carries the summary before it.
 *
 * Runs: FUZZ_RUNS / 4 (250 by default). Seed: FUZZ_SEED, else random.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AgentMessage, AssistantMessage, CompactRequest, Message, SystemMessage, ToolResultMessage, UserMessage } from "../../src/types.js";
import { emptyUsage } from "../../src/providers/assistant-stream.js";
import { scriptedModel } from "../../src/providers/scripted.js";
import { replayTranscript } from "../../src/transcript/index.js";
import { estimateTokens, isCompactionSummary, summarizingCompactor, unpairedToolMessages } from "../../src/recovery/index.js";

const RUNS = Math.ceil(Number(process.env.FUZZ_RUNS ?? 1000) / 4);
const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;

interface StepSpec {
  calls: number;
  resultOrder: number[];
  steerBetween: boolean;
  outputLength: number;
}

interface TurnSpec {
  textLength: number;
  systemBefore: boolean;
  note: boolean;
  steps: StepSpec[];
  recovery: boolean;
}

const stepArb: fc.Arbitrary<StepSpec> = fc.integer({ min: 0, max: 4 }).chain((calls) =>
  fc.record({
    calls: fc.constant(calls),
    resultOrder: fc.shuffledSubarray(
      Array.from({ length: calls }, (_, i) => i),
      { minLength: calls, maxLength: calls },
    ),
    steerBetween: fc.boolean(),
    outputLength: fc.oneof(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 2_000, max: 12_000 })),
  }),
);

const turnArb: fc.Arbitrary<TurnSpec> = fc.record({
  textLength: fc.integer({ min: 0, max: 600 }),
  systemBefore: fc.boolean(),
  note: fc.boolean(),
  steps: fc.array(stepArb, { maxLength: 3 }),
  recovery: fc.boolean(),
});

const scenarioArb = fc.record({
  turns: fc.array(turnArb, { minLength: 0, maxLength: 8 }),
  keepTurns: fc.integer({ min: 0, max: 4 }),
  chunkTokens: fc.integer({ min: 250, max: 4_000 }),
});

function buildTranscript(turns: TurnSpec[]): AgentMessage[] {
  let t = 0;
  let id = 0;
  const out: AgentMessage[] = [{ role: "system", content: "base prompt", toolsAdded: [decl("t0")], timestamp: t++ } satisfies SystemMessage];
  const assistant = (words: string, calls: string[]): AssistantMessage => ({
    role: "assistant",
    content: [{ type: "text", text: words }, ...calls.map((callId) => ({ type: "toolCall" as const, id: callId, name: "tool", arguments: { callId } }))],
    api: "scripted",
    provider: "scripted",
    model: "scripted",
    usage: { ...emptyUsage(), input: 10, output: 5 },
    stopReason: calls.length > 0 ? "toolUse" : "stop",
    timestamp: t++,
  });
  turns.forEach((turn, n) => {
    if (turn.systemBefore) out.push({ role: "system", content: `added ${n}`, toolsAdded: [decl(`t${n + 1}`)], sections: { [`s${n % 3}`]: `v${n}` }, timestamp: t++ });
    out.push({ role: "user", content: `u${n} ` + "q".repeat(turn.textLength), timestamp: t++ } satisfies UserMessage);
    if (turn.note) out.push({ role: "note", text: "ui", timestamp: t++ } as unknown as AgentMessage);
    for (const step of turn.steps) {
      const ids = Array.from({ length: step.calls }, () => `c${id++}`);
      out.push(assistant(`a${n}`, ids));
      if (step.steerBetween && ids.length > 0) out.push({ role: "user", content: `steer ${n}`, timestamp: t++ });
      for (const i of step.resultOrder) {
        out.push({ role: "toolResult", toolCallId: ids[i], toolName: "tool", content: [{ type: "text", text: "o".repeat(step.outputLength) }], isError: false, timestamp: t++ } satisfies ToolResultMessage);
      }
    }
    out.push(assistant(`final ${n}`, []));
    if (turn.recovery) {
      out.push({ role: "user", content: "resume", recovery: "output_limit", timestamp: t++ });
      out.push(assistant(`resumed ${n}`, []));
    }
  });
  return out;
}

function decl(name: string) {
  return { name, description: name, parameters: { type: "object" } };
}

describe("R62: property test of the summarizing compactor", () => {
  it(`R62: random transcripts keep every call with its result, a verbatim tail, the prompt and tools; requests fit (${RUNS} runs, seed ${SEED})`, async () => {
    console.log(`compactor fuzz: ${RUNS} runs, seed ${SEED} (FUZZ_SEED=${SEED} to replay)`);
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ turns, keepTurns, chunkTokens }) => {
        const transcript = buildTranscript(turns);
        expect(unpairedToolMessages(transcript)).toEqual({ orphanedResults: [], unansweredCalls: [] });
        const requests: Message[][] = [];
        const complete: CompactRequest["complete"] = async (messages) => {
          requests.push(messages);
          return {
            role: "assistant",
            content: [{ type: "text", text: `summary ${requests.length} ` + "s".repeat(150) }],
            api: "scripted",
            provider: "scripted",
            model: "scripted",
            usage: emptyUsage(),
            stopReason: "stop",
            timestamp: 0,
          };
        };
        const request: CompactRequest = { messages: transcript, model: scriptedModel, reason: "overflow", estimatedTokens: estimateTokens(transcript), complete };
        const compacted = await summarizingCompactor({ keepTurns, chunkTokens, maxSummaryTokens: 64 })(request, new AbortController().signal);

        if (compacted === transcript) {
          expect(requests).toEqual([]);
          return;
        }
        expect(unpairedToolMessages(compacted)).toEqual({ orphanedResults: [], unansweredCalls: [] });
        // [system?, summary, ...tail], the tail being the input's own messages from a turn start.
        const summaryAt = compacted.findIndex(isCompactionSummary);
        expect(summaryAt === 0 || (summaryAt === 1 && (compacted[0] as { role: string }).role === "system")).toBe(true);
        const tail = compacted.slice(summaryAt + 1);
        const tailStart = transcript.length - tail.length;
        tail.forEach((message, i) => expect(message).toBe(transcript[tailStart + i]));
        if (tail.length > 0) expect(tail[0]).toMatchObject({ role: "user" });
        expect(tail[0] && "recovery" in tail[0]).toBeFalsy();
        const before = replayTranscript(transcript);
        const after = replayTranscript(compacted);
        expect(after.systemPrompt).toBe(before.systemPrompt);
        expect([...after.tools.values()]).toEqual([...before.tools.values()]);
        // Every request fits and rolls up the summary before it; the last one's answer is the summary.
        expect(requests.length).toBeGreaterThan(0);
        requests.forEach((messages, i) => {
          expect(estimateTokens(messages)).toBeLessThanOrEqual(chunkTokens);
          if (i > 0) expect((messages[1] as UserMessage).content).toContain(`<summary>\nsummary ${i} `);
        });
        expect((compacted[summaryAt] as UserMessage).content).toContain(`summary ${requests.length} `);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
