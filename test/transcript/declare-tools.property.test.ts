import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AgentMessage, SystemMessage, ToolDecl } from "../../src/types.js";
import {
  applySystemMessages,
  createDeclaredToolSet,
  declareToolChanges,
  keyedToolDecl,
  replayTranscript,
} from "../../src/transcript/index.js";
import { byName } from "./helpers.js";

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

// A small pool so names collide and definitions change often.
const declArb: fc.Arbitrary<ToolDecl> = fc.record({
  name: fc.constantFrom("a", "b", "c", "d", "e"),
  description: fc.constantFrom("x", "y"),
  parameters: fc.constantFrom<Record<string, unknown>>({ type: "object" }, { type: "object", properties: { p: { type: "string" } } }),
});

const systemArb: fc.Arbitrary<SystemMessage> = fc
  .record(
    {
      content: fc.constantFrom("", "s"),
      toolsAdded: fc.array(declArb, { maxLength: 4 }),
      toolsRemoved: fc.array(fc.record({ name: fc.constantFrom("a", "b", "c", "d", "e", "z") }), { maxLength: 3 }),
      timestamp: fc.nat(),
    },
    { requiredKeys: ["content", "timestamp"] },
  )
  .map((m) => ({ role: "system" as const, ...m }));

const messageArb: fc.Arbitrary<AgentMessage> = fc.oneof(
  systemArb,
  fc.constant<AgentMessage>({ role: "user", content: "u", timestamp: 0 }),
);

const firstByName = (tools: ToolDecl[]) => {
  const seen = new Map<string, ToolDecl>();
  for (const t of tools) if (!seen.has(t.name)) seen.set(t.name, t);
  return [...seen.values()];
};

describe("declareToolChanges property (R30)", () => {
  it("R30: replaying the transcript after injection always yields context.tools", () => {
    fc.assert(
      fc.property(
        fc.array(messageArb, { maxLength: 8 }),
        fc.array(messageArb, { maxLength: 5 }),
        fc.array(declArb, { maxLength: 6 }),
        (transcript, pending, tools) => {
          const transcriptDeclared = createDeclaredToolSet(transcript);
          const out = declareToolChanges({ transcriptDeclared, pending, tools: tools.map(keyedToolDecl), now: 9 });
          const after = [...transcript, ...out];

          // The invariant.
          expect(byName(replayTranscript(after).tools.values())).toEqual(byName(firstByName(tools)));
          // Idempotent: a second check right after finds nothing to announce.
          const declaredAfter = applySystemMessages(new Map(transcriptDeclared), out);
          expect([...declaredAfter]).toEqual([...createDeclaredToolSet(after)]);
          expect(declareToolChanges({ transcriptDeclared: declaredAfter, pending: [], tools: tools.map(keyedToolDecl), now: 9 })).toEqual([]);

          // Only the last pending system message may change; at most one message is inserted, first.
          const lastSystem = pending.map((m) => m.role).lastIndexOf("system");
          const inserted = out.length - pending.length;
          expect(inserted === 0 || inserted === 1).toBe(true);
          if (inserted === 1) {
            expect(lastSystem).toBe(-1);
            expect(out[0]).toMatchObject({ role: "system", content: "", timestamp: 9 });
          }
          pending.forEach((m, i) => {
            if (i !== lastSystem) expect(out[i + inserted]).toBe(m);
          });
          // Empty lists are never produced.
          for (const m of out) {
            if (m.role !== "system" || pending.includes(m)) continue;
            expect(m.toolsAdded?.length).not.toBe(0);
            expect(m.toolsRemoved?.length).not.toBe(0);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });
});
