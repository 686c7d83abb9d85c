import { describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/types.js";
import { createDeclaredToolSet, declareToolChanges, diffDeclaredTools, replayTranscript } from "../../src/transcript/index.js";
import { byName, decl, keyed, sys, user } from "./helpers.js";

const NOW = 1234;

function declare(transcript: AgentMessage[], pending: AgentMessage[], tools = keyed()) {
  return declareToolChanges({ transcriptDeclared: createDeclaredToolSet(transcript), pending, tools, now: NOW });
}

describe("declareToolChanges (R30)", () => {
  it("R30: no change → no message, same message objects", () => {
    const transcript = [sys("p", { toolsAdded: [decl("a"), decl("b")] })];
    const pending = [user(), user("2")];
    const out = declare(transcript, pending, keyed(decl("a"), decl("b")));
    expect(out).toEqual(pending);
    expect(out[0]).toBe(pending[0]);
    expect(out).not.toBe(pending);
  });

  it("R30: declared in a different order is not a change", () => {
    const transcript = [sys("p", { toolsAdded: [decl("b"), decl("a")] })];
    expect(declare(transcript, [user()], keyed(decl("a"), decl("b")))).toHaveLength(1);
  });

  it("R30: an added tool → a system message inserted before the first pending message", () => {
    const u = user();
    const out = declare([sys("p")], [u], keyed(decl("a")));
    expect(out).toEqual([{ role: "system", content: "", toolsAdded: [decl("a")], timestamp: NOW }, u]);
    expect(out[1]).toBe(u);
  });

  it("R30: toolsAdded follows context.tools order and reuses the caller's declaration objects", () => {
    const [c, a] = [decl("c"), decl("a")];
    const out = declare([sys("p", { toolsAdded: [decl("b")] })], [user()], keyed(c, decl("b"), a));
    expect(out[0]).toEqual({ role: "system", content: "", toolsAdded: [c, a], timestamp: NOW });
    expect((out[0] as { toolsAdded: unknown[] }).toolsAdded[0]).toBe(c);
  });

  it("R30: a removed tool → toolsRemoved only (toolsAdded omitted), in previously declared order", () => {
    const transcript = [sys("p", { toolsAdded: [decl("c"), decl("b"), decl("a")] })];
    const out = declare(transcript, [user()], keyed(decl("b")));
    expect(out[0]).toEqual({ role: "system", content: "", toolsRemoved: [{ name: "c" }, { name: "a" }], timestamp: NOW });
  });

  it("R30: a changed definition is a removal plus an addition", () => {
    const transcript = [sys("p", { toolsAdded: [decl("a"), decl("b")] })];
    const changedParams = decl("b", "d", { type: "object", properties: { x: { type: "number" } } });
    const out = declare(transcript, [user()], keyed(decl("a", "new"), changedParams));
    expect(out[0]).toEqual({
      role: "system",
      content: "",
      toolsAdded: [decl("a", "new"), changedParams],
      toolsRemoved: [{ name: "a" }, { name: "b" }],
      timestamp: NOW,
    });
  });

  it("R30: with nothing pending, a delta is the only injected message (continue, later turns)", () => {
    expect(declare([sys("p"), user()], [], keyed(decl("a")))).toEqual([{ role: "system", content: "", toolsAdded: [decl("a")], timestamp: NOW }]);
    expect(declare([sys("p"), user()], [], keyed())).toEqual([]);
  });

  it("R30: the declaration goes before custom messages too", () => {
    const note = { role: "note", text: "n", timestamp: 3 } as never;
    const out = declare([], [note, user()], keyed(decl("a")));
    expect(out.map((m) => m.role)).toEqual(["system", "note", "user"]);
  });

  it("R30: a pending system message gets exactly the delta as its tool fields", () => {
    const s = sys("x", { sections: { k: "K" } });
    const out = declare([sys("p", { toolsAdded: [decl("a")] })], [s, user()], keyed(decl("b")));
    expect(out).toHaveLength(2);
    expect(out[0]).toEqual({ ...s, toolsAdded: [decl("b")], toolsRemoved: [{ name: "a" }] });
    expect(out[0]).not.toBe(s);
    expect(s).toEqual(sys("x", { sections: { k: "K" } })); // the caller's object is not mutated
  });

  it("R30: the last pending system message takes the delta even when it follows a user message", () => {
    const out = declare([sys("p", { toolsAdded: [decl("a")] })], [user(), sys("y")], keyed(decl("a"), decl("c")));
    expect(out.map((m) => m.role)).toEqual(["user", "system"]);
    expect(out[1]).toEqual(sys("y", { toolsAdded: [decl("c")] }));
  });

  it("R30: its own declarations are ignored and replaced (bogus declarations are dropped)", () => {
    const s = sys("x", { toolsAdded: [decl("z")], toolsRemoved: [{ name: "a" }] });
    const out = declare([sys("p", { toolsAdded: [decl("a")] })], [s, user()], keyed(decl("a")));
    expect(out[0]).toEqual(sys("x"));
    expect(out[0]).not.toHaveProperty("toolsAdded");
    expect(out[0]).not.toHaveProperty("toolsRemoved");
  });

  it("R30: declaring exactly the delta still yields a copy", () => {
    const s = sys("x", { toolsAdded: [decl("b")] });
    const out = declare([sys("p", { toolsAdded: [decl("a")] })], [s, user()], keyed(decl("a"), decl("b")));
    expect(out[0]).toEqual(s);
    expect(out[0]).not.toBe(s);
  });

  it("R30: the caller's object is kept when there is no change and it declared none (even as empty lists)", () => {
    const transcript = [sys("p", { toolsAdded: [decl("a")] })];
    const plain = sys("x");
    expect(declare(transcript, [plain, user()], keyed(decl("a")))[0]).toBe(plain);
    const emptyLists = sys("x", { toolsAdded: [], toolsRemoved: [] });
    expect(declare(transcript, [emptyLists, user()], keyed(decl("a")))[0]).toBe(emptyLists);
  });

  it("R30: empty lists on a pending system message are omitted when it receives a delta", () => {
    const s = sys("x", { toolsAdded: [], toolsRemoved: [] });
    const out = declare([], [s], keyed(decl("a")));
    expect(out[0]).toEqual(sys("x", { toolsAdded: [decl("a")] }));
    expect(out[0]).not.toHaveProperty("toolsRemoved");
  });

  it("R30: earlier pending system messages keep their tool fields and count as declared", () => {
    const first = sys("x", { toolsAdded: [decl("b")] });
    const last = sys("y", { toolsAdded: [decl("q")] });
    const u = user();
    const out = declare([sys("p", { toolsAdded: [decl("a")] })], [first, u, last], keyed(decl("a"), decl("c")));
    expect(out[0]).toBe(first);
    expect(out[1]).toBe(u);
    expect(out[2]).toEqual(sys("y", { toolsAdded: [decl("c")], toolsRemoved: [{ name: "b" }] }));
  });

  it("R30: tools sharing a name count once, the first winning", () => {
    const out = declare([], [user()], keyed(decl("a", "first"), decl("a", "second")));
    expect(out[0]).toEqual({ role: "system", content: "", toolsAdded: [decl("a", "first")], timestamp: NOW });
    const again = declare([...out], [user()], keyed(decl("a", "first"), decl("a", "second")));
    expect(again).toHaveLength(1);
  });

  it("R30: the transcript's set is not mutated, and the result replays to context.tools", () => {
    const transcript = [sys("p", { toolsAdded: [decl("a")] })];
    const transcriptDeclared = createDeclaredToolSet(transcript);
    const before = [...transcriptDeclared];
    const pending = [sys("x", { toolsAdded: [decl("b")] }), user(), sys("y")];
    const tools = keyed(decl("c"), decl("a", "v2"));
    const out = declareToolChanges({ transcriptDeclared, pending, tools, now: NOW });
    expect([...transcriptDeclared]).toEqual(before);
    expect(byName(replayTranscript([...transcript, ...out]).tools.values())).toEqual(byName([decl("c"), decl("a", "v2")]));
  });

  it("R30: diffDeclaredTools is undefined for identical sets", () => {
    expect(diffDeclaredTools(createDeclaredToolSet([sys("", { toolsAdded: [decl("a")] })]), keyed(decl("a")))).toBeUndefined();
    expect(diffDeclaredTools(new Map(), [])).toBeUndefined();
  });
});
