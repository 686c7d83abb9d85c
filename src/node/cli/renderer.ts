/**
 * Renders a session's `AgentEvent`s: assistant text as it streams (word-wrapped to the terminal),
 * thinking dimmed, one line per tool call (a spinner or progress bar while it runs, fed by
 * `tool_execution_update`; then its duration and a one-line result), and a summary line per run
 * (turns, tool calls, tokens, cost). The loop's own events (SPEC R66) get a live "retrying in 2 s"
 * line and short dim notes. The same code renders plain text; only the `Screen` and the `Style` differ.
 */
import type { AgentEndReason, AgentEvent, AgentMessage, AnyAgentEvent, AssistantMessage } from "../../types.js";
import { progressOf, type ToolProgress } from "../tools/progress.js";
import { describeToolArgs, firstLine, formatCost, formatCount, formatDuration, plural, resultText } from "./format.js";
import { describeRuntimeEvent, retryLine, type RetryScheduled } from "./runtime-notes.js";
import type { Screen } from "./screen.js";
import { truncate, wrapParts, wrapText, type Style } from "./style.js";
import { visible } from "./visible.js";

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const BAR_WIDTH = 16;
/** The start of each row of thinking in plain output. */
export const THINKING_MARK = "[thinking] ";

export type NoticeTone = "info" | "dim" | "warn" | "error" | "steer" | "success";

/** The input line at the bottom of the live area. */
export interface InputLine {
  prompt: string;
  buffer: string;
  /** Shown dimmed when the buffer is empty. */
  hint?: string;
}

interface RunningTool {
  name: string;
  args: unknown;
  started: number;
  progress?: ToolProgress;
  text?: string;
}

export interface RunStats {
  turns: number;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cost: number;
  /** R60: attempts the loop withheld and made again. */
  retries: number;
  durationMs: number;
  stopReason: string | undefined;
  errorMessage: string | undefined;
}

export interface RendererOptions {
  screen: Screen;
  style: Style;
  /** Monotonic clock in ms. */
  now?: () => number;
}

export class Renderer {
  private readonly screen: Screen;
  private readonly style: Style;
  private readonly now: () => number;
  private readonly tools = new Map<string, RunningTool>();
  private block: "text" | "thinking" | undefined;
  private inBold = false;
  private inCode = false;
  private word = "";
  private column = 0;
  private frame = 0;
  private waiting = false;
  private input: InputLine | undefined;
  private question: string | undefined;
  private run: RunStats | undefined;
  private runStarted = 0;
  private lastRun: RunStats | undefined;
  /** R60: the backoff being waited out, until the next attempt streams. */
  private retry: { event: RetryScheduled; until: number } | undefined;
  /** The Agent's transcript length, kept for R62's "N messages → M". */
  private messages = 0;

  constructor(options: RendererOptions) {
    this.screen = options.screen;
    this.style = options.style;
    this.now = options.now ?? (() => performance.now());
  }

  /** Whether the screen has a live area (an ANSI terminal). */
  get isLive(): boolean {
    return this.screen.live;
  }

  /** Whether something animates (the caller ticks the spinner while true). */
  get animating(): boolean {
    return this.screen.live && (this.tools.size > 0 || this.waiting || this.retry !== undefined);
  }

  /** The stats of the last finished run. */
  get lastRunStats(): RunStats | undefined {
    return this.lastRun;
  }

  /** The Agent's transcript length now (before a run: the messages it starts from). */
  get transcriptLength(): number {
    return this.messages;
  }

  syncTranscript(length: number): void {
    this.messages = length;
  }

  handle(event: AnyAgentEvent): void {
    switch (event.type) {
      case "agent_start":
        this.runStarted = this.now();
        this.run = { turns: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0, totalTokens: 0, cost: 0, retries: 0, durationMs: 0, stopReason: undefined, errorMessage: undefined };
        break;
      case "turn_start":
        if (this.run) this.run.turns++;
        this.waiting = true;
        break;
      case "message_start":
        if (event.message.role === "assistant") {
          // R60: the next attempt streams (or the wait was aborted): the retry line goes.
          this.retry = undefined;
          this.waiting = true;
        }
        // A user message the loop added (R61's recovery) is its note's, already shown; user messages are echoed by the app.
        break;
      case "message_update":
        this.waiting = false;
        this.streamEvent(event.assistantMessageEvent);
        break;
      case "message_end":
        this.messages++;
        if (event.message.role === "assistant") this.assistantEnded(event.message as AssistantMessage);
        break;
      case "tool_execution_start":
        this.waiting = false;
        this.tools.set(event.toolCallId, { name: event.toolName, args: event.args, started: this.now() });
        if (!this.screen.live) this.line(`  ${this.style.dim("→")} ${this.toolTitle(event.toolName, event.args)}`);
        break;
      case "tool_execution_update": {
        const tool = this.tools.get(event.toolCallId);
        if (tool) {
          tool.progress = progressOf(event.partialResult);
          tool.text = visible(firstLine(resultText(event.partialResult))) || tool.text;
        }
        break;
      }
      case "tool_execution_end": {
        const tool = this.tools.get(event.toolCallId);
        this.tools.delete(event.toolCallId);
        if (this.run) this.run.toolCalls++;
        this.toolEnded(event.toolName, tool?.args ?? {}, event.result, event.isError, event.durationMs);
        if (this.tools.size === 0) this.waiting = true;
        break;
      }
      case "turn_end":
        this.waiting = false;
        break;
      case "agent_end":
        this.waiting = false;
        this.retry = undefined;
        this.tools.clear();
        this.runEnded(event.messages, event.reason);
        break;
      default:
        this.runtimeEvent(event);
    }
    this.redraw();
  }

  /** R60–R62: the loop's own events (R66). */
  private runtimeEvent(event: Exclude<AnyAgentEvent, AgentEvent>): void {
    // A note may quote a provider's or a tool's error message.
    const note = (text: string) => {
      for (const row of this.rows(visible(text), "    ")) this.line(this.style.dim(row));
    };
    switch (event.type) {
      case "retry_scheduled":
        if (this.run) this.run.retries++;
        this.waiting = false;
        // Live: a line that counts down below the output; plain: the line, once.
        if (this.screen.live) this.retry = { event, until: this.now() + event.delayMs };
        else note(`  ↻ ${retryLine(event, event.delayMs)}`);
        return;
      case "message_discarded":
        // R81: a retraction after a crash takes back what never ended (no message to uncount); the
        // partial answer it follows (replayed from the journal) is closed before the note.
        if (event.reason !== "interrupted") this.messages--;
        else this.endBlock();
        note(`  ↳ ${describeRuntimeEvent(event)}`);
        return;
      case "transcript_replaced":
        note(`  ↻ ${describeRuntimeEvent(event, this.messages)}`);
        this.messages = event.messages.length;
        return;
      default:
        note(`  ↳ ${describeRuntimeEvent(event)}`);
    }
  }

  /**
   * A line of its own (steering acknowledged, abort requested, errors, …). Its control characters
   * are shown, not obeyed (it may quote an error message); `styled`: the text carries the CLI's own
   * styles and the caller made what it quotes visible (`visible`).
   */
  notice(text: string, tone: NoticeTone = "info", options: { styled?: boolean } = {}): void {
    if (!options.styled) text = visible(text);
    const s = this.style;
    const paint = (row: string) =>
      tone === "dim" ? s.dim(row)
      : tone === "warn" ? s.yellow(row)
      : tone === "error" ? s.red(row)
      : tone === "steer" ? s.cyan(row)
      : tone === "success" ? s.green(row)
      : row;
    for (const row of this.rows(text, "  ")) this.line(paint(row));
    this.redraw();
  }

  /** A whole assistant text drawn as the stream draws it (light markdown, wrapped at word boundaries): a restored transcript. */
  text(text: string): void {
    this.startBlock("text");
    this.write(text);
    this.endBlock();
  }

  /** A permanent dim line of its own, after whatever is open (the restored-transcript divider). */
  divider(text: string): void {
    this.endBlock();
    this.line(this.style.dim(text));
    this.redraw();
  }

  /** Raw permanent text (the echo of a prompt, the banner). */
  print(text: string): void {
    this.flushWord();
    this.screen.print(text);
    const lastNewline = text.lastIndexOf("\n");
    this.column = lastNewline === -1 ? this.column + text.length : text.length - lastNewline - 1;
  }

  setInput(line: InputLine | undefined): void {
    this.input = line;
    this.redraw();
  }

  setQuestion(text: string | undefined): void {
    this.question = text;
    this.redraw();
  }

  /** Advances the spinners. */
  tick(): void {
    this.frame = (this.frame + 1) % SPINNER.length;
    this.redraw();
  }

  close(): void {
    this.flushWord();
    this.screen.close();
  }

  // -- streaming text ------------------------------------------------------------------------

  private streamEvent(event: Extract<AgentEvent, { type: "message_update" }>["assistantMessageEvent"]): void {
    switch (event.type) {
      case "text_start":
      case "thinking_start":
        this.startBlock(event.type === "text_start" ? "text" : "thinking");
        break;
      case "text_delta":
      case "thinking_delta":
        if (!this.block) this.startBlock(event.type === "text_delta" ? "text" : "thinking");
        this.write(event.delta);
        break;
      case "text_end":
      case "thinking_end":
        this.endBlock();
        break;
    }
  }

  private startBlock(kind: "text" | "thinking"): void {
    this.endBlock();
    this.block = kind;
  }

  private endBlock(): void {
    if (!this.block) return;
    this.flushWord();
    this.closeStyles();
    this.inBold = this.inCode = false;
    this.block = undefined;
    this.newlineIfNeeded();
  }

  /** Streams text, word-wrapped when the width is known. */
  private write(text: string): void {
    const width = this.wrapWidth();
    if (width === undefined) {
      this.emit(text);
      return;
    }
    for (const char of text) {
      if (char === "\n") {
        this.flushWord();
        this.emitRaw("\n");
      } else if (char === " " || char === "\t") {
        this.flushWord();
        if (this.column + 1 > width) this.emitRaw("\n");
        else if (this.column > 0) this.emit(" ");
      } else this.word += char;
    }
  }

  private flushWord(): void {
    if (!this.word) return;
    const width = this.wrapWidth() ?? Infinity;
    let word = this.word;
    this.word = "";
    if (this.column > 0 && this.column + Array.from(word).length > width) this.emitRaw("\n");
    while (Array.from(word).length > width) {
      const chars = Array.from(word);
      this.emit(chars.slice(0, width).join(""));
      this.emitRaw("\n");
      word = chars.slice(width).join("");
    }
    this.emit(word);
  }

  /** Prints the model's text: its control characters shown, not obeyed (`visible`), then styled. */
  private emit(raw: string): void {
    if (!raw) return;
    const text = visible(raw);
    if (this.block === "thinking" && !this.style.enabled) {
      this.emitMarkedThinking(text);
      return;
    }
    const styled = this.block === "thinking" ? this.style.dim(this.style.italic(text)) : this.block === "text" && this.style.enabled ? this.markdown(text) : text;
    this.screen.print(styled);
    const shown = this.style.enabled && this.block === "text" ? text.replace(/\*\*|`/g, "") : text;
    const lastNewline = shown.lastIndexOf("\n");
    this.column = lastNewline === -1 ? this.column + Array.from(shown).length : Array.from(shown.slice(lastNewline + 1)).length;
  }

  /** Without styles (a pipe, NO_COLOR) every row of thinking starts with a mark, so it can be told (and filtered) from the answer. */
  private emitMarkedThinking(text: string): void {
    let out = "";
    text.split("\n").forEach((segment, index) => {
      if (index > 0) {
        out += "\n";
        this.column = 0;
      }
      if (segment && this.column === 0) {
        out += THINKING_MARK;
        this.column = THINKING_MARK.length;
      }
      out += segment;
      this.column += Array.from(segment).length;
    });
    this.screen.print(out);
  }

  /** Light markdown on a terminal: **bold** and `code` (markers hidden), across deltas. */
  private markdown(text: string): string {
    let out = "";
    for (let index = 0; index < text.length; index++) {
      if (text.startsWith("**", index)) {
        this.inBold = !this.inBold;
        out += this.inBold ? "\x1b[1m" : "\x1b[22m";
        index++;
      } else if (text[index] === "`") {
        this.inCode = !this.inCode;
        out += this.inCode ? "\x1b[36m" : "\x1b[39m";
      } else out += text[index];
    }
    return out;
  }

  /** Closes open markdown styles (before a newline or at the end of a block); returns the codes to reopen them. */
  private closeStyles(): string {
    let close = "";
    let reopen = "";
    if (this.inBold) (close += "\x1b[22m"), (reopen += "\x1b[1m");
    if (this.inCode) (close += "\x1b[39m"), (reopen += "\x1b[36m");
    if (close) this.screen.print(close);
    return reopen;
  }

  private emitRaw(text: string): void {
    const reopen = text.includes("\n") ? this.closeStyles() : "";
    this.screen.print(text + reopen);
    if (text.endsWith("\n")) this.column = 0;
  }

  private newlineIfNeeded(): void {
    this.flushWord();
    if (this.column > 0) this.emitRaw("\n");
  }

  private line(text: string): void {
    this.newlineIfNeeded();
    this.screen.print(`${text}\n`);
    this.column = 0;
  }

  /** Plain text as rows that fit the terminal (word-wrapped), or as is when the width is unknown. */
  private rows(text: string, indent = ""): string[] {
    const width = this.wrapWidth();
    return width === undefined ? [text] : wrapText(text, width, indent);
  }

  private wrapWidth(): number | undefined {
    return this.screen.columns === undefined ? undefined : Math.max(10, this.screen.columns - 1);
  }

  // -- messages, tools, runs -------------------------------------------------------------------

  private assistantEnded(message: AssistantMessage): void {
    this.endBlock();
    this.waiting = false;
    if (this.run) {
      const usage = message.usage;
      if (usage) {
        this.run.inputTokens += usage.input + usage.cacheRead + usage.cacheWrite;
        this.run.outputTokens += usage.output;
        this.run.totalTokens += usage.totalTokens;
        this.run.cost += usage.cost?.total ?? 0;
      }
      this.run.stopReason = message.stopReason;
      if (message.errorMessage) this.run.errorMessage = message.errorMessage;
    }
    if (message.stopReason === "error") for (const row of this.rows(`✗ error: ${visible(message.errorMessage ?? "the model request failed")}`, "  ")) this.line(this.style.red(row));
    if (message.stopReason === "aborted") this.line(this.style.yellow("⏹ aborted: the run was stopped"));
  }

  /** The model names the tool and writes the arguments (a path may hold anything): both shown, not obeyed. */
  private toolTitle(name: string, args: unknown): string {
    const description = visible(describeToolArgs(name, args));
    return `${this.style.bold(visible(name))}${description ? ` ${description}` : ""}`;
  }

  private toolEnded(name: string, args: unknown, result: unknown, isError: boolean, durationMs: number | undefined): void {
    const s = this.style;
    // A result quotes the workspace (a file's first line, a file name).
    const text = visible(firstLine(resultText(result as { content: [] })));
    const mark = isError ? s.red("✗") : s.green("✓");
    const duration = durationMs === undefined ? "not run" : formatDuration(durationMs);
    const width = (this.screen.columns ?? 120) - 1;
    const head = `  ${mark} ${this.toolTitle(name, args)} ${s.dim("·")} ${duration} ${s.dim("·")} `;
    const room = Math.max(10, width - stripWidth(head));
    const summary = truncate(text || (isError ? "failed" : "done"), this.screen.columns === undefined ? 200 : room);
    this.line(head + (isError ? s.red(summary) : s.dim(summary)));
  }

  private runEnded(messages: AgentMessage[], reason: AgentEndReason | undefined): void {
    this.endBlock();
    const run = this.run;
    if (!run) return;
    run.durationMs = this.now() - this.runStarted;
    const last = [...messages].reverse().find((message) => message.role === "assistant") as AssistantMessage | undefined;
    if (last) run.stopReason = last.stopReason;
    const parts = [
      plural(run.turns, "turn"),
      plural(run.toolCalls, "tool call"),
      `${formatCount(run.totalTokens)} tokens (${formatCount(run.inputTokens)} in, ${formatCount(run.outputTokens)} out)`,
      formatCost(run.cost),
      formatDuration(run.durationMs),
      ...(run.retries > 0 ? [plural(run.retries, "retry", "retries")] : []),
      // R63: why the run ended, when it is not simply done.
      ...(reason && reason !== "completed" ? [`ended: ${END_REASONS[reason]}`] : []),
    ];
    // The footer breaks between its parts, never inside one.
    const width = this.wrapWidth();
    const rows = width === undefined ? [`── ${parts.join(" · ")}`] : wrapParts([`── ${parts[0]}`, ...parts.slice(1)], width);
    for (const row of rows) this.line(this.style.dim(row));
    this.lastRun = run;
    this.run = undefined;
  }

  // -- the live area ---------------------------------------------------------------------------


  private redraw(): void {
    if (!this.screen.live) return;
    const s = this.style;
    const width = (this.screen.columns ?? 80) - 1;
    const lines: string[] = [];
    const spin = s.cyan(SPINNER[this.frame]);
    for (const tool of this.tools.values()) {
      const elapsed = formatDuration(this.now() - tool.started);
      const head = `  ${spin} ${this.toolTitle(tool.name, tool.args)} ${s.dim("·")} ${elapsed}`;
      let status = "";
      if (tool.progress?.total) {
        const ratio = Math.min(1, tool.progress.done / tool.progress.total);
        const filled = Math.round(ratio * BAR_WIDTH);
        status = ` ${s.cyan("█".repeat(filled))}${s.dim("░".repeat(BAR_WIDTH - filled))} ${tool.progress.done}/${tool.progress.total} ${tool.progress.unit}`;
      } else if (tool.text) status = ` ${s.dim("·")} ${s.dim(tool.text)}`;
      lines.push(fit(head + status, width));
    }
    if (this.retry) lines.push(fit(`${spin} ${s.yellow(retryLine(this.retry.event, this.retry.until - this.now()))}`, width));
    else if (this.waiting && this.tools.size === 0) lines.push(`${spin} ${s.dim("waiting for the model…")}`);
    if (this.question) lines.push(fit(s.yellow(this.question), width));
    if (this.input) {
      const room = Math.max(5, width - stripWidth(this.input.prompt));
      const shown = inputTail(this.input.buffer, room);
      const hint = !this.input.buffer && this.input.hint ? s.dim(truncate(this.input.hint, room)) : "";
      lines.push(`${this.input.prompt}${shown}${hint}`);
    }
    this.screen.setLive(lines);
  }
}

/**
 * The last `room` characters of the input buffer, one row: line breaks (a pasted prompt) shown as
 * ⏎, tabs as spaces. Only the tail is looked at, so a redraw costs the same for a 100 KB buffer.
 */
export function inputTail(buffer: string, room: number): string {
  // Two UTF-16 units per character at most: this slice holds the last `room` characters.
  const chars = Array.from(buffer.slice(-2 * room));
  return chars.slice(Math.max(0, chars.length - room)).join("").replace(/\n/g, "⏎").replace(/\t/g, " ");
}

const stripWidth = (text: string) => Array.from(text.replace(/\x1b\[[0-9;]*m/g, "")).length;

/** Cuts a styled line to `width` visible columns (only at the end, so the styles stay balanced enough). */
function fit(text: string, width: number): string {
  if (stripWidth(text) <= width) return text;
  let out = "";
  let visible = 0;
  const parts = text.split(/(\x1b\[[0-9;]*m)/);
  for (const part of parts) {
    if (part.startsWith("\x1b[")) {
      out += part;
      continue;
    }
    for (const char of part) {
      if (visible >= width - 1) return `${out}…\x1b[0m`;
      out += char;
      visible++;
    }
  }
  return out;
}

/** R63: what the footer says of a run that did not simply complete. */
const END_REASONS: Record<AgentEndReason, string> = {
  completed: "completed",
  aborted: "aborted",
  error: "error",
  finish_turn_end: "finishTurn said end",
  max_turns: "turn limit (--max-turns)",
  max_tokens: "token limit",
  max_cost: "cost limit (--max-cost)",
  max_output_tokens: "output limit",
  prompt_too_long: "prompt too long",
  output_invalid: "no valid final answer",
};
