import { describe, expect, it } from "vitest";
import { LineEditor } from "../../src/node/cli/input.js";

describe("line editor: keypresses to actions", () => {
  it("types, edits and submits; Alt+Enter marks a follow-up", () => {
    const editor = new LineEditor();
    for (const char of "steer x") editor.keypress(char, { name: char });
    editor.keypress(undefined, { name: "backspace" });
    expect(editor.buffer).toBe("steer ");
    expect(editor.keypress("\r", { name: "return" })).toEqual([{ type: "submit", text: "steer ", alt: false }, { type: "change" }]);
    editor.keypress("later", undefined);
    expect(editor.keypress("\x1b\r", { name: "return", meta: true })).toEqual([{ type: "submit", text: "later", alt: true }, { type: "change" }]);
  });

  it("Esc, Ctrl-C, Ctrl-D (only on an empty line), Ctrl-U and Ctrl-W", () => {
    const editor = new LineEditor();
    expect(editor.keypress("\x1b", { name: "escape" })).toEqual([{ type: "escape" }]);
    expect(editor.keypress("\x03", { name: "c", ctrl: true })).toEqual([{ type: "interrupt" }]);
    expect(editor.keypress("\x04", { name: "d", ctrl: true })).toEqual([{ type: "eof" }]);
    editor.keypress("two words", undefined);
    expect(editor.keypress("\x04", { name: "d", ctrl: true })).toEqual([]);
    editor.keypress("\x17", { name: "w", ctrl: true });
    expect(editor.buffer).toBe("two ");
    editor.keypress("\x15", { name: "u", ctrl: true });
    expect(editor.buffer).toBe("");
  });

  it("ignores control characters and arrows", () => {
    const editor = new LineEditor();
    expect(editor.keypress("\x1b[A", { name: "up" })).toEqual([]);
    editor.keypress("a\tb", undefined);
    expect(editor.buffer).toBe("ab");
  });
});
