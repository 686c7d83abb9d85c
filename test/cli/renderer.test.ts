import { describe, expect, it } from "vitest";
import type { AgentEndReason, AgentEvent, AnyAgentEvent, AssistantMessage, AssistantMessageEvent, TransientFailureKind } from "../../src/index.js";
import { emptyUsage } from "../../src/index.js";
import { Renderer } from "../../src/node/cli/renderer.js";
import { retryLine, type RetryScheduled } from "../../src/node/cli/runtime-notes.js";
import { liveScreen, plainScreen } from "../../src/node/cli/screen.js";
import { ansiStyle, plainStyle } from "../../src/node/cli/style.js";
import { formatMcpStatus } from "../../src/node/cli/mcp-session.js";
import { approvalQuestion } from "../../src/node/cli/write-approval.js";
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

type RetryKind = TransientFailureKind | "unknown";

describe("issue 17 item 7: the loop's own events (R60–R63, R66)", () => {
  const retry = (attempt: number, delayMs: number, kind: RetryKind = "overloaded"): AnyAgentEvent => ({
    type: "retry_scheduled",
    attempt,
    maxAttempts: 5,
    delayMs,
    kind,
    errorMessage: "529 overloaded_error",
    model: "m",
  });
  const answer = (text: string, stopReason: AssistantMessage["stopReason"] = "stop"): AnyAgentEvent[] => [
    { type: "message_start", message: assistant(stopReason) },
    update({ type: "text_start", contentIndex: 0 }),
    update({ type: "text_delta", contentIndex: 0, delta: text }),
    update({ type: "text_end", contentIndex: 0, content: text }),
    { type: "message_end", message: assistant(stopReason) },
  ];
  const recoveryMessage = { role: "user", content: "Output limit reached. Resume where you stopped.", timestamp: 0, recovery: "output_limit" } as const;

  function plainRun(events: AnyAgentEvent[], transcriptLength = 0): string {
    let out = "";
    const renderer = new Renderer({ screen: plainScreen({ write: (text) => (out += text) }), style: plainStyle, now: () => 0 });
    renderer.syncTranscript(transcriptLength);
    for (const event of events) renderer.handle(event);
    return out;
  }

  it("R60: each scheduled retry is a line (kind in words, seconds rounded up), and the footer counts them", () => {
    const out = plainRun([
      { type: "agent_start" },
      { type: "turn_start" },
      retry(2, 1500),
      retry(3, 2001, "rate_limited"),
      retry(4, 400, "server_error"),
      retry(5, 30_000, "connection"),
      ...answer("Done."),
      { type: "turn_end", message: assistant("stop"), toolResults: [] },
      { type: "agent_end", messages: [assistant("stop")], reason: "completed" },
    ]);
    expect(out).toBe(
      [
        "  ↻ retrying in 2 s (overloaded, attempt 2 of 5)",
        "  ↻ retrying in 3 s (rate limited, attempt 3 of 5)",
        "  ↻ retrying in 1 s (server error, attempt 4 of 5)",
        "  ↻ retrying in 30 s (connection error, attempt 5 of 5)",
        "Done.",
        "── 1 turn · 0 tool calls · 1,234 tokens (1,200 in, 34 out) · $0.01 · 0ms · 4 retries",
        "",
      ].join("\n"),
    );
    expect(retryLine({ ...(retry(2, 10) as RetryScheduled), kind: "stall" }, 10)).toBe("retrying in 1 s (stall, attempt 2 of 5)");
    expect(retryLine({ ...(retry(2, 10) as RetryScheduled), kind: "unknown" }, 0)).toBe("retrying now (transient error, attempt 2 of 5)");
  });

  it("R60: on a terminal the retry line counts down below the output and goes when the next attempt streams", () => {
    let clock = 0;
    const terminal = new VirtualTerminal(120);
    const renderer = new Renderer({ screen: liveScreen({ write: (text) => terminal.write(text), columns: 120, rows: 20 }), style: ansiStyle, now: () => clock });
    renderer.handle({ type: "agent_start" });
    renderer.handle({ type: "turn_start" });
    expect(terminal.screen()).toEqual(["⠋ waiting for the model…"]);
    renderer.handle(retry(2, 2000));
    expect(renderer.animating).toBe(true);
    expect(terminal.screen()).toEqual(["⠋ retrying in 2 s (overloaded, attempt 2 of 5)"]);
    clock = 1200;
    renderer.tick();
    expect(terminal.screen()).toEqual(["⠙ retrying in 1 s (overloaded, attempt 2 of 5)"]);
    clock = 2300;
    renderer.tick();
    expect(terminal.screen()).toEqual(["⠹ retrying now (overloaded, attempt 2 of 5)"]);
    for (const event of answer("Back.")) renderer.handle(event);
    expect(terminal.screen()).toEqual(["Back.", ""]);
    renderer.handle({ type: "turn_end", message: assistant("stop"), toolResults: [] });
    renderer.handle({ type: "agent_end", messages: [assistant("stop")], reason: "completed" });
    renderer.close();
    expect(terminal.screen()).toEqual(["Back.", "── 1 turn · 0 tool calls · 1,234 tokens (1,200 in, 34 out) · $0.01 · 2.3s · 1 retry", ""]);
  });

  it("R60: an abort during the backoff clears the line; the footer says aborted", () => {
    const terminal = new VirtualTerminal(120);
    const renderer = new Renderer({ screen: liveScreen({ write: (text) => terminal.write(text), columns: 120, rows: 20 }), style: ansiStyle, now: () => 0 });
    const events: AnyAgentEvent[] = [
      { type: "agent_start" },
      { type: "turn_start" },
      retry(2, 5000),
      { type: "message_start", message: assistant("aborted") },
      { type: "message_end", message: assistant("aborted") },
      { type: "turn_end", message: assistant("aborted"), toolResults: [] },
      { type: "agent_end", messages: [assistant("aborted")], reason: "aborted" },
    ];
    for (const event of events) renderer.handle(event);
    renderer.close();
    expect(renderer.animating).toBe(false);
    expect(terminal.screen()).toEqual([
      "⏹ aborted: the run was stopped",
      "── 1 turn · 0 tool calls · 1,234 tokens (1,200 in, 34 out) · $0.01 · 0ms · 1 retry · ended: aborted",
      "",
    ]);
  });

  it("R61: escalation, discard and recovery get dim notes; the recovery message is the loop's note, not a prompt", () => {
    const out = plainRun([
      { type: "agent_start" },
      { type: "turn_start" },
      ...answer("Part one, cut", "length"),
      { type: "output_limit_escalated", fromMaxTokens: 8192, toMaxTokens: 64_000 },
      { type: "message_discarded", message: assistant("length"), reason: "output_limit_escalated" },
      ...answer("Part one, cut again", "length"),
      { type: "output_limit_recovery", attempt: 1, maxRecoveries: 3 },
      { type: "message_start", message: recoveryMessage },
      { type: "message_end", message: recoveryMessage },
      ...answer("and part two."),
      { type: "turn_end", message: assistant("stop"), toolResults: [] },
      { type: "agent_end", messages: [assistant("length"), recoveryMessage, assistant("stop")], reason: "completed" },
    ]);
    expect(out).toBe(
      [
        "Part one, cut",
        "  ↳ output limit hit: asking again with up to 64,000 output tokens (was 8,192)",
        "  ↳ the cut-off answer above was discarded",
        "Part one, cut again",
        "  ↳ output limit hit: asking the model to continue where it stopped (1 of 3)",
        "and part two.",
        "── 1 turn · 0 tool calls · 3,702 tokens (3,600 in, 102 out) · $0.04 · 0ms",
        "",
      ].join("\n"),
    );
    expect(out).not.toContain("Resume where you stopped");
  });

  it("R61, R63: three recoveries then the footer's end reason", () => {
    const events: AnyAgentEvent[] = [{ type: "agent_start" }, { type: "turn_start" }, ...answer("a", "length")];
    for (const attempt of [1, 2, 3]) {
      events.push({ type: "output_limit_recovery", attempt, maxRecoveries: 3 }, { type: "message_start", message: recoveryMessage }, { type: "message_end", message: recoveryMessage });
      events.push(...answer(String(attempt), "length"));
    }
    events.push({ type: "turn_end", message: assistant("length"), toolResults: [] }, { type: "agent_end", messages: [], reason: "max_output_tokens" });
    const rows = plainRun(events).split("\n");
    expect(rows.filter((row) => row.includes("continue where it stopped"))).toEqual([1, 2, 3].map((n) => `  ↳ output limit hit: asking the model to continue where it stopped (${n} of 3)`));
    expect(rows.at(-2)).toMatch(/^── 1 turn · .* · ended: output limit$/);
  });

  it("R62: a compaction says how many messages the transcript had and has (overflow and threshold)", () => {
    const prompt = { role: "user", content: "go", timestamp: 0 } as const;
    const out = plainRun(
      [
        { type: "agent_start" },
        { type: "message_start", message: prompt },
        { type: "message_end", message: prompt },
        { type: "turn_start" },
        { type: "transcript_replaced", messages: [prompt, prompt], reason: "overflow" },
        ...answer("Fits now."),
        { type: "turn_end", message: assistant("stop"), toolResults: [] },
        { type: "transcript_replaced", messages: [prompt], reason: "threshold" },
        { type: "turn_start" },
        ...answer("Still here."),
        { type: "turn_end", message: assistant("stop"), toolResults: [] },
        { type: "agent_end", messages: [], reason: "completed" },
      ],
      40,
    );
    expect(out.split("\n").slice(0, 4)).toEqual([
      "  ↻ context compacted (41 messages → 2): the prompt was too long",
      "Fits now.",
      "  ↻ context compacted (3 messages → 1): over the token threshold",
      "Still here.",
    ]);
  });

  it("R61: a discarded answer leaves the transcript count (the next compaction counts without it)", () => {
    const prompt = { role: "user", content: "go", timestamp: 0 } as const;
    const out = plainRun(
      [
        ...answer("cut", "length"),
        { type: "message_discarded", message: assistant("length"), reason: "output_limit_escalated" },
        { type: "transcript_replaced", messages: [prompt], reason: "overflow" },
      ],
      5,
    );
    expect(out).toContain("context compacted (5 messages → 1)");
  });

  it("R63: the footer names each end reason but completed", () => {
    const footer = (reason: AgentEndReason) => {
      const rows = plainRun([{ type: "agent_start" }, { type: "agent_end", messages: [], reason }]).trimEnd().split("\n");
      return rows.at(-1)!.split(" · ").at(-1);
    };
    expect(footer("completed")).toBe("0ms");
    expect(footer("max_turns")).toBe("ended: turn limit (--max-turns)");
    expect(footer("max_cost")).toBe("ended: cost limit (--max-cost)");
    expect(footer("max_output_tokens")).toBe("ended: output limit");
    expect(footer("prompt_too_long")).toBe("ended: prompt too long");
  });
});

describe("workspace text reaches the terminal as text, never as escape sequences", () => {
  // A window title (OSC 0), a clipboard write (OSC 52), a screen clear, a carriage return, a C1 CSI,
  // a right-to-left override and isolate (which reorder what follows on screen: "Trojan Source").
  const HOSTILE = "\x1b]0;pwned\x07 \x1b]52;c;ZXZpbA==\x07 \x1b[2J\r\x9b31m \u202egnp.exe\u2066";
  const SHOWN = "␛]0;pwned␇ ␛]52;c;ZXZpbA==␇ ␛[2J␍\\x9b31m \\u202egnp.exe\\u2066";
  const hostileRun = (): AgentEvent[] => [
    { type: "agent_start" },
    { type: "turn_start" },
    { type: "message_start", message: assistant("toolUse") },
    update({ type: "thinking_delta", contentIndex: 0, delta: `think ${HOSTILE}` }),
    update({ type: "thinking_end", contentIndex: 0, content: "" }),
    update({ type: "text_delta", contentIndex: 1, delta: `**say** ${HOSTILE}` }),
    update({ type: "text_end", contentIndex: 1, content: "" }),
    { type: "message_end", message: assistant("toolUse") },
    { type: "tool_execution_start", toolCallId: "a", toolName: "read_file", args: { path: `name${HOSTILE}` } },
    { type: "tool_execution_update", toolCallId: "a", toolName: "read_file", args: {}, partialResult: { content: [{ type: "text", text: `progress ${HOSTILE}` }], details: {} } },
    { type: "tool_execution_end", toolCallId: "a", toolName: "read_file", result: { content: [{ type: "text", text: `line ${HOSTILE}` }], details: {} }, isError: false, durationMs: 3 },
    { type: "turn_end", message: assistant("toolUse"), toolResults: [] },
    { type: "message_start", message: assistant("error", { errorMessage: `failed ${HOSTILE}` }) },
    { type: "message_end", message: assistant("error", { errorMessage: `failed ${HOSTILE}` }) },
    { type: "agent_end", messages: [assistant("error")] },
  ];
  /** Control characters written that are not the CLI's own: its SGR styles, and its live area's cursor moves and carriage returns. */
  const foreign = (out: string, own = /\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]/g) => out.replace(own, "").match(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g) ?? [];

  it("plain output: the model's text and thinking, the tool line, its result and the error show every control character", () => {
    let out = "";
    const renderer = new Renderer({ screen: plainScreen({ write: (text) => (out += text) }), style: plainStyle, now: () => 0 });
    for (const event of hostileRun()) renderer.handle(event);
    renderer.notice(`✗ ${HOSTILE}`, "error");
    expect(foreign(out)).toEqual([]);
    expect(out).not.toContain("\x1b");
    expect(out.split("\n").filter((line) => line.includes(SHOWN)).map((line) => line.slice(0, line.indexOf(SHOWN)))).toEqual([
      "[thinking] think ",
      "**say** ",
      "  → read_file name",
      "  ✓ read_file name",
      "✗ error: failed ",
      "✗ ",
    ]);
  });

  it("ANSI output: the same, while the CLI's own styles (bold, dim, red) still go out", () => {
    let out = "";
    const renderer = new Renderer({ screen: liveScreen({ write: (text) => (out += text), columns: 400, rows: 20 }), style: ansiStyle, now: () => 0 });
    for (const event of hostileRun()) {
      renderer.handle(event);
      renderer.tick();
    }
    expect(foreign(out, /\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]|\r/g)).toEqual([]);
    // No escape sequence but the styles and cursor moves the CLI writes itself.
    expect(out.match(/\x1b(?!\[[0-9;?]*[A-Za-z]|[78])/g) ?? []).toEqual([]);
    expect(out.match(/\x1b\[[0-9;]*m/g)).toEqual(expect.arrayContaining(["\x1b[1m", "\x1b[2m", "\x1b[31m"]));
    expect(out).toContain(SHOWN);
    expect(out).not.toContain("\x1b[2J");
  });

  it("the questions and /mcp's listing show what the model and a server wrote, and keep the CLI's own styles", () => {
    const request = { approvalId: "w", toolCallId: "w", toolName: "write_file", args: { path: `a${HOSTILE}`, content: "x" } };
    expect(approvalQuestion(request as never)).toBe(`? allow write_file to write a${SHOWN} (1 bytes)? [y/N/a = always this path] `);
    const status = formatMcpStatus(
      [{ name: "srv", transport: "stdio", state: "failed", error: `down ${HOSTILE}`, tools: [{ name: `t${HOSTILE}`, concurrencySafe: false, needsApproval: true }], skipped: [], trustAnnotations: false }] as never,
      ansiStyle,
    );
    expect(foreign(status)).toEqual([]);
    expect(status).toContain(`\x1b[31mdown ${SHOWN}\x1b[39m`);
    expect(status).toContain(`  t${SHOWN}`);
  });
});
