import { describe, expect, it } from "vitest";
import type { SystemMessage } from "../../src/types.js";
import {
  applySystemMessages,
  createDeclaredToolSet,
  createSystemReplay,
  currentSystemMessage,
  renderSystemPrompt,
  replaySystemMessage,
  replayTranscript,
  systemMessageFor,
  toolDeclKey,
} from "../../src/transcript/index.js";
import { byName, decl, sys, user } from "./helpers.js";

describe("replayTranscript: prompt", () => {
  it("R30: the leading message's content is the base prompt; later contents add instructions", () => {
    const r = replayTranscript([sys("base"), user(), sys("more"), sys("again")]);
    expect(r.systemPrompt).toBe("base\n\nmore\n\nagain");
    expect(r.content).toBe("base\n\nmore\n\nagain");
  });

  it("R30: text blocks are joined by a newline, non-text blocks skipped", () => {
    const content = [
      { type: "text", text: "a" },
      { type: "image", data: "x", mimeType: "image/png" },
      { type: "text", text: "b" },
    ] as unknown as SystemMessage["content"];
    expect(replayTranscript([sys(content), sys([{ type: "text", text: "c" }])]).systemPrompt).toBe("a\nb\n\nc");
  });

  it("R30: empty contents add nothing; whitespace is kept verbatim", () => {
    expect(replayTranscript([sys(""), sys("x"), sys([]), sys(" ")]).systemPrompt).toBe("x\n\n ");
  });

  it("R30: sections render after all content, each on its own, in section order", () => {
    const r = replayTranscript([sys("base", { sections: { a: "A", b: "B" } }), sys("more")]);
    expect(r.systemPrompt).toBe("base\n\nmore\n\nA\n\nB");
    expect(r.sections).toEqual({ a: "A", b: "B" });
  });

  it("R30: later messages replace a section in place, null removes it, re-adding appends", () => {
    const r = replayTranscript([
      sys("p", { sections: { a: "A", b: "B", c: "C" } }),
      sys("", { sections: { a: "A2", b: null } }),
      sys("", { sections: { b: "B3" } }),
    ]);
    expect(r.systemPrompt).toBe("p\n\nA2\n\nC\n\nB3");
    expect(Object.keys(r.sections)).toEqual(["a", "c", "b"]);
  });

  it("R30: empty sections are kept but not rendered; a prompt of sections only has no leading separator", () => {
    const r = replayTranscript([sys("", { sections: { a: "", b: "B" } })]);
    expect(r.systemPrompt).toBe("B");
    expect(r.sections).toEqual({ a: "", b: "B" });
  });

  it("R30: an undefined section value (invalid JSON, possible in memory) changes nothing", () => {
    const r = replayTranscript([sys("p", { sections: { a: "A" } }), sys("", { sections: { a: undefined as unknown as string } })]);
    expect(r.systemPrompt).toBe("p\n\nA");
  });

  it("R30: a section named __proto__ is an ordinary section", () => {
    const messages = JSON.parse('[{"role":"system","content":"p","sections":{"__proto__":"P"},"timestamp":1}]');
    const r = replayTranscript(messages);
    expect(r.systemPrompt).toBe("p\n\nP");
    expect(Object.keys(r.sections)).toEqual(["__proto__"]);
  });

  it("R30: non-system and custom messages are skipped; no system message gives an empty prompt", () => {
    const custom = { role: "note", text: "n", timestamp: 3 } as never;
    expect(replayTranscript([user(), custom]).systemPrompt).toBe("");
    expect(replayTranscript([user(), custom, sys("late")]).systemPrompt).toBe("late");
  });

  it("R50: the incremental replay equals the whole-transcript replay", () => {
    const messages = [sys("a", { sections: { s: "S" } }), user(), sys("b", { sections: { s: null, t: "T" } })];
    const replay = createSystemReplay();
    replaySystemMessage(replay, messages[0] as never);
    expect(renderSystemPrompt(replay)).toBe("a\n\nS");
    replaySystemMessage(replay, messages[2] as never);
    expect(renderSystemPrompt(replay)).toBe(replayTranscript(messages).systemPrompt);
  });
});

describe("replayTranscript: tools", () => {
  it("R30: per message toolsRemoved then toolsAdded, keyed by name", () => {
    const r = replayTranscript([
      sys("p", { toolsAdded: [decl("a"), decl("b"), decl("c")] }),
      sys("", { toolsRemoved: [{ name: "a" }, { name: "zz" }], toolsAdded: [decl("d")] }),
      sys("", { toolsRemoved: [{ name: "b" }], toolsAdded: [decl("b", "new")] }),
    ]);
    expect([...r.tools.keys()]).toEqual(["c", "d", "b"]);
    expect(r.tools.get("b")?.description).toBe("new");
  });

  it("R30: re-adding a declared name without removing it replaces it in place", () => {
    const r = replayTranscript([sys("", { toolsAdded: [decl("a"), decl("b")] }), sys("", { toolsAdded: [decl("a", "v2")] })]);
    expect([...r.tools.keys()]).toEqual(["a", "b"]);
    expect(r.tools.get("a")?.description).toBe("v2");
  });

  it("R30: the incremental declared set matches the full replay, keyed by declaration", () => {
    const messages = [sys("", { toolsAdded: [decl("a"), decl("b")] }), user(), sys("", { toolsRemoved: [{ name: "a" }], toolsAdded: [decl("c")] })];
    const whole = createDeclaredToolSet(messages);
    const incremental = applySystemMessages(createDeclaredToolSet(messages.slice(0, 2)), messages.slice(2));
    expect([...incremental]).toEqual([...whole]);
    expect([...whole]).toEqual([
      ["b", toolDeclKey(decl("b"))],
      ["c", toolDeclKey(decl("c"))],
    ]);
  });

  it("R30: the declaration key ignores extra fields and is memoized per object", () => {
    const d = decl("a", "x", { type: "object", properties: { p: { type: "string" } } });
    const withExtras = { ...d, label: "A", execute: () => undefined } as never;
    expect(toolDeclKey(withExtras)).toBe(toolDeclKey(d));
    expect(toolDeclKey(d)).toBe(JSON.stringify({ name: "a", description: "x", parameters: d.parameters }));
  });
});

describe("currentSystemMessage / systemMessageFor (R50, R54)", () => {
  it("R54: collapses the transcript into one leading message keeping sections and replayed tools", () => {
    const messages = [
      sys("base", { sections: { s: "S1" }, toolsAdded: [decl("a")], timestamp: 3 }),
      user(),
      sys("more", { sections: { s: "S2", t: "T" }, toolsRemoved: [{ name: "a" }], toolsAdded: [decl("b")], timestamp: 5 }),
    ];
    const head = currentSystemMessage(messages);
    expect(head).toEqual({ role: "system", content: "base\n\nmore", sections: { s: "S2", t: "T" }, toolsAdded: [decl("b")], timestamp: 3 });
    expect(replayTranscript([head!]).systemPrompt).toBe(replayTranscript(messages).systemPrompt);
  });

  it("R54: no system message → undefined; empty sections and tools are omitted", () => {
    expect(currentSystemMessage([user()])).toBeUndefined();
    expect(currentSystemMessage([sys("p", { sections: { a: null } })])).toEqual({ role: "system", content: "p", timestamp: 1 });
  });

  it("R50: systemMessageFor declares every tool in toolsAdded, omitted when there are none", () => {
    expect(systemMessageFor("hi", [decl("a"), decl("b")])).toEqual({ role: "system", content: "hi", toolsAdded: [decl("a"), decl("b")], timestamp: 0 });
    expect(systemMessageFor("hi", [], 7)).toEqual({ role: "system", content: "hi", timestamp: 7 });
    expect(systemMessageFor("", [decl("a")])).toEqual({ role: "system", content: "", toolsAdded: [decl("a")], timestamp: 0 });
  });

  it("R50: systemMessageFor returns undefined for an empty prompt without tools (the transcript stays empty)", () => {
    expect(systemMessageFor("", [])).toBeUndefined();
  });

  it("R50: systemMessageFor declares a duplicated tool name once, the first winning", () => {
    const m = systemMessageFor("", [decl("a", "first"), decl("a", "second")]);
    expect(byName(m!.toolsAdded!)).toEqual({ a: decl("a", "first") });
  });
});
