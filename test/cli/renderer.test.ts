import { describe, expect, it } from "vitest";
import type { AgentEvent, AssistantMessage, AssistantMessageEvent } from "../../src/index.js";
import { emptyUsage } from "../../src/index.js";
import { Renderer } from "../../src/node/cli/renderer.js";
import { liveScreen, plainScreen } from "../../src/node/cli/screen.js";
import { ansiStyle, plainStyle } from "../../src/node/cli/style.js";
import { VirtualTerminal } from "./vt.js";

const assistant = (stopReason: AssistantMessage["stopReason"], extra: Partial<AssistantMessage> = {}): AssistantMessage => ({
  role: "assistant",
  content: [],
  api: "scripted",
  provider: "scripted",
  model: "m",
  usage: { ...emptyUsage(), input: 1200, output: 34, totalTokens: 1234, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.0123 } },
  stopReason,
  timestamp: 0,
  ...extra,
});

const update = (assistantMessageEvent: Partial<AssistantMessageEvent> & { type: string }): AgentEvent =>
  ({ type: "message_update", message: assistant("stop"), assistantMessageEvent }) as AgentEvent;

/** A run: thinking, streamed text, two parallel tools (one failing), a final answer. */
function sessionEvents(): AgentEvent[] {
  return [
    { type: "agent_start" },
    { type: "turn_start" },
    { type: "message_start", message: assistant("toolUse") },
    update({ type: "thinking_start", contentIndex: 0 }),
    update({ type: "thinking_delta", contentIndex: 0, delta: "Let me " }),
    update({ type: "thinking_delta", contentIndex: 0, delta: "look." }),
    update({ type: "thinking_end", contentIndex: 0, content: "Let me look." }),
    update({ type: "text_start", contentIndex: 1 }),
    update({ type: "text_delta", contentIndex: 1, delta: "Checking the " }),
    update({ type: "text_delta", contentIndex: 1, delta: "files." }),
    update({ type: "text_end", contentIndex: 1, content: "Checking the files." }),
    { type: "message_end", message: assistant("toolUse") },
    { type: "tool_execution_start", toolCallId: "a", toolName: "search_text", args: { pattern: "TODO" } },
    { type: "tool_execution_start", toolCallId: "b", toolName: "read_file", args: { path: "nope.txt", startLine: 2, endLine: 5 } },
    {
      type: "tool_execution_update",
      toolCallId: "a",
      toolName: "search_text",
      args: {},
      partialResult: { content: [{ type: "text", text: "3/9 files" }], details: { progress: { done: 3, total: 9, unit: "files" } } },
    },
    { type: "tool_execution_end", toolCallId: "b", toolName: "read_file", result: { content: [{ type: "text", text: "No such file: nope.txt" }], details: {} }, isError: true, durationMs: 3 },
    { type: "tool_execution_end", toolCallId: "a", toolName: "search_text", result: { content: [{ type: "text", text: "2 matches in 1 file (9 searched)\na.ts:1: TODO" }], details: {} }, isError: false, durationMs: 1234 },
    { type: "turn_end", message: assistant("toolUse"), toolResults: [] },
    { type: "turn_start" },
    { type: "message_start", message: assistant("stop") },
    update({ type: "text_start", contentIndex: 0 }),
    update({ type: "text_delta", contentIndex: 0, delta: "Two TODOs, both in a.ts." }),
    update({ type: "text_end", contentIndex: 0, content: "" }),
    { type: "message_end", message: assistant("stop") },
    { type: "turn_end", message: assistant("stop"), toolResults: [] },
    { type: "agent_end", messages: [assistant("stop")] },
  ];
}

function plainRender(events: AgentEvent[], setup?: (renderer: Renderer) => void): string {
  let out = "";
  let clock = 0;
  const renderer = new Renderer({ screen: plainScreen({ write: (text) => (out += text) }), style: plainStyle, now: () => (clock += 100) });
  setup?.(renderer);
  for (const event of events) renderer.handle(event);
  return out;
}

describe("renderer, plain mode (no ANSI)", () => {
  it("streams text and thinking, one line per tool start and end, a summary line", () => {
    expect(plainRender(sessionEvents())).toBe(
      [
        "[thinking] Let me look.",
        "Checking the files.",
        "  → search_text /TODO/",
        "  → read_file nope.txt:2-5",
        "  ✗ read_file nope.txt:2-5 · 3ms · No such file: nope.txt",
        "  ✓ search_text /TODO/ · 1.2s · 2 matches in 1 file (9 searched)",
        "Two TODOs, both in a.ts.",
        "── 2 turns · 2 tool calls · 2,468 tokens (2,400 in, 68 out) · $0.02 · 300ms",
        "",
      ].join("\n"),
    );
  });

  it("never writes an escape sequence", () => {
    expect(plainRender(sessionEvents())).not.toContain("\x1b");
  });

  it("shows provider errors and aborts", () => {
    const failed = plainRender([
      { type: "agent_start" },
      { type: "turn_start" },
      { type: "message_start", message: assistant("error", { errorMessage: "Anthropic API error 401" }) },
      { type: "message_end", message: assistant("error", { errorMessage: "Anthropic API error 401" }) },
      { type: "turn_end", message: assistant("error"), toolResults: [] },
      { type: "agent_end", messages: [assistant("error")] },
    ]);
    expect(failed.split("\n")[0]).toBe("✗ error: Anthropic API error 401");
    const aborted = plainRender([
      { type: "agent_start" },
      { type: "turn_start" },
      { type: "message_start", message: assistant("aborted") },
      update({ type: "text_delta", contentIndex: 0, delta: "Half a sent" }),
      { type: "message_end", message: assistant("aborted") },
      { type: "turn_end", message: assistant("aborted"), toolResults: [] },
      { type: "agent_end", messages: [assistant("aborted")] },
    ]);
    expect(aborted.split("\n").slice(0, 2)).toEqual(["Half a sent", "⏹ aborted: the run was stopped"]);
  });

  it("notices get lines of their own, even mid-stream", () => {
    let out = "";
    const renderer = new Renderer({ screen: plainScreen({ write: (text) => (out += text) }), style: plainStyle });
    renderer.handle(update({ type: "text_start", contentIndex: 0 }));
    renderer.handle(update({ type: "text_delta", contentIndex: 0, delta: "Working on" }));
    renderer.notice("↳ steering: focus", "steer");
    expect(out).toBe("Working on\n↳ steering: focus\n");
  });
});

describe("renderer, live mode (ANSI, redrawn in place)", () => {
  function liveRender(events: AgentEvent[], columns = 40) {
    const terminal = new VirtualTerminal(columns);
    const renderer = new Renderer({ screen: liveScreen({ write: (text) => terminal.write(text), columns, rows: 20 }), style: ansiStyle, now: () => 0 });
    for (const event of events) renderer.handle(event);
    return { renderer, screen: () => terminal.screen() };
  }

  it("word-wraps streamed text to the terminal width", () => {
    const { renderer, screen } = liveRender([
      update({ type: "text_start", contentIndex: 0 }),
      update({ type: "text_delta", contentIndex: 0, delta: "one two three four five six seven eight nine ten eleven" }),
      update({ type: "text_end", contentIndex: 0, content: "" }),
    ]);
    renderer.close();
    expect(screen()).toEqual(["one two three four five six seven eight", "nine ten eleven", ""]);
  });

  it("shows a progress bar for a running tool below the output, then replaces it by the result line", () => {
    const events = sessionEvents();
    const running = liveRender(events.slice(0, 15), 80);
    expect(running.screen()).toEqual([
      "Let me look.",
      "Checking the files.",
      "  ⠋ search_text /TODO/ · 0ms █████░░░░░░░░░░░ 3/9 files",
      "  ⠋ read_file nope.txt:2-5 · 0ms",
    ]);
    const done = liveRender(events, 80);
    expect(done.screen()).toEqual([
      "Let me look.",
      "Checking the files.",
      "  ✗ read_file nope.txt:2-5 · 3ms · No such file: nope.txt",
      "  ✓ search_text /TODO/ · 1.2s · 2 matches in 1 file (9 searched)",
      "Two TODOs, both in a.ts.",
      "── 2 turns · 2 tool calls · 2,468 tokens (2,400 in, 68 out) · $0.02 · 0ms",
      "",
    ]);
  });

  it("keeps the input line and a question at the bottom while output streams above", () => {
    const { renderer, screen } = liveRender([update({ type: "text_start", contentIndex: 0 }), update({ type: "text_delta", contentIndex: 0, delta: "Partial " })]);
    renderer.setQuestion("? allow write_file? [y/N]");
    renderer.setInput({ prompt: "› ", buffer: "focus on tests" });
    renderer.handle(update({ type: "text_delta", contentIndex: 0, delta: "line done\nNext " }));
    expect(screen()).toEqual(["Partial line done", "Next", "? allow write_file? [y/N]", "› focus on tests"]);
  });
});

describe("issue 16: small texts", () => {
  it("piped output marks every row of thinking, so it can be told from the answer", () => {
    const out = plainRender([
      update({ type: "thinking_start", contentIndex: 0 }),
      update({ type: "thinking_delta", contentIndex: 0, delta: "first\nsec" }),
      update({ type: "thinking_delta", contentIndex: 0, delta: "ond" }),
      update({ type: "thinking_end", contentIndex: 0, content: "" }),
      update({ type: "text_start", contentIndex: 1 }),
      update({ type: "text_delta", contentIndex: 1, delta: "The answer." }),
      update({ type: "text_end", contentIndex: 1, content: "" }),
    ]);
    expect(out).toBe("[thinking] first\n[thinking] second\nThe answer.\n");
  });

  it("at 60 columns the footer breaks between its parts and notices between words", () => {
    const terminal = new VirtualTerminal(60);
    const renderer = new Renderer({ screen: liveScreen({ write: (text) => terminal.write(text), columns: 60, rows: 20 }), style: ansiStyle, now: () => 0 });
    renderer.notice("while it works: Enter steers · >> text queues a follow-up · Esc/Ctrl-C aborts · Ctrl-C twice exits", "dim");
    const events = sessionEvents().map((event) =>
      event.type === "message_end" ? { ...event, message: assistant("stop", { usage: { ...emptyUsage(), input: 73_517, output: 867, totalTokens: 74_384, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 1.5 } } }) } : event,
    );
    for (const event of events) renderer.handle(event as AgentEvent);
    renderer.close();
    const rows = terminal.screen();
    expect(rows.slice(0, 2)).toEqual(["while it works: Enter steers · >> text queues a follow-up ·", "  Esc/Ctrl-C aborts · Ctrl-C twice exits"]);
    const footer = rows.slice(rows.findIndex((row) => row.startsWith("── ")), -1);
    expect(footer).toEqual(["── 2 turns · 2 tool calls", "   148,768 tokens (147,034 in, 1,734 out) · $3.00 · 0ms"]);
    for (const row of rows) expect(row.length).toBeLessThan(60);
  });
});
