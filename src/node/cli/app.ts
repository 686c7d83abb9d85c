/**
 * The terminal agent: parses the arguments, picks the model, builds the tools, the permission
 * policy, the renderer, the trace and the inspector, and drives an `Agent` from the keyboard:
 * one-shot (a prompt on the command line) or a prompt loop. While a run is going, Enter sends a
 * steering message, `>>` (or Alt+Enter) queues a follow-up, Esc or Ctrl-C aborts the run, and a
 * second Ctrl-C exits.
 */
import { statSync } from "node:fs";
import path from "node:path";
import { Agent, isRuntimeEvent } from "../../index.js";
import type { AgentMessage, AnyAgentEvent } from "../../types.js";
import { createWorkspaceTools, listFilesTool, permissionPolicy, readFileTool, searchTextTool, writeFileTool, type PermissionDecision, type PermissionRequest } from "../tools/index.js";
import { parseCliArgs, USAGE, type CliOptions } from "./args.js";
import { formatCount } from "./format.js";
import { connectInspector, type Inspector, type InspectorRelay, type InspectorSetup } from "./inspector.js";
import { TerminalInput, type InputAction, type KeyboardStream } from "./input.js";
import { chooseModel, type ModelChoice } from "./model.js";
import { DEMO_FOLLOW_UP, DEMO_STEERING } from "./offline-demo.js";
import { recoveryConfig } from "./recovery.js";
import { Renderer } from "./renderer.js";
import { describeRuntimeEvent } from "./runtime-notes.js";
import { liveScreen, plainScreen, type Output } from "./screen.js";
import { ansiStyle, plainStyle, useAnsi, type Style } from "./style.js";
import { openTraceFile, type TraceFile } from "./trace-file.js";
import { readVersion } from "./version.js";

export interface CliIO {
  stdin: KeyboardStream;
  stdout: Output & { isTTY?: boolean };
  stderr: { write(text: string): unknown };
  env: Record<string, string | undefined>;
  cwd: string;
  /** Installs a SIGINT handler (used when stdin is not a terminal); returns its removal. */
  onSigint?: (handler: () => void) => () => void;
  /** Scales the offline demo's delays and tool pacing (default 1; tests use 0). */
  demoPace?: number;
  /** Where `--inspect` sends, and how it starts a relay (tests use their own). */
  inspector?: InspectorSetup;
}

/** Exit codes: 0 done, 1 the run failed (provider error), 2 bad usage, 130 aborted (one-shot). */
export async function runCli(argv: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseCliArgs(argv);
  if (parsed.kind === "help") {
    io.stdout.write(USAGE);
    return 0;
  }
  if (parsed.kind === "version") {
    io.stdout.write(`${readVersion()}\n`);
    return 0;
  }
  if (parsed.kind === "error") {
    io.stderr.write(`error: ${parsed.message}\n\n${USAGE}`);
    return 2;
  }
  const options = parsed.options;
  const cwd = path.resolve(io.cwd, options.cwd ?? ".");
  if (!isDirectory(cwd)) {
    io.stderr.write(`error: no such directory: ${options.cwd ?? cwd}\n`);
    return 2;
  }
  let prompt = options.prompt;
  const interactive = prompt === undefined && io.stdin.isTTY === true;
  if (prompt === undefined && !interactive) {
    prompt = (await readAll(io.stdin)).trim();
    if (!prompt) {
      io.stderr.write(`error: no prompt: give one as an argument, pipe one on stdin, or run on a terminal for a prompt loop\n\n${USAGE}`);
      return 2;
    }
  }

  const choice = chooseModel(options, io.env, io.demoPace ?? 1);
  let trace: TraceFile | undefined;
  if (options.trace !== undefined) {
    try {
      trace = openTraceFile(path.resolve(io.cwd, options.trace), {
        model: choice.model,
        cwd,
        secrets: [io.env.ANTHROPIC_API_KEY].filter((value): value is string => !!value),
      });
    } catch (error) {
      io.stderr.write(`error: ${(error as Error).message}\n`);
      return 2;
    }
  }
  const session = new CliSession(io, options, choice, cwd, trace, interactive);
  return session.start(prompt);
}

class CliSession {
  private readonly style: Style;
  private readonly renderer: Renderer;
  private readonly agent: Agent;
  private input?: TerminalInput;
  private inspector?: Inspector;
  private relay?: InspectorRelay;
  private running = false;
  private aborting = false;
  /** A Ctrl-C was the last key: another one exits. */
  private armedAt: number | undefined;
  private question?: { resolve: (decision: PermissionDecision) => void };
  private pendingExit: number | undefined;
  private resolveExit?: (code: number) => void;
  private spinner?: ReturnType<typeof setInterval>;
  private demoInjected = false;
  private removeSigint?: () => void;

  constructor(
    private readonly io: CliIO,
    private readonly options: CliOptions,
    private readonly choice: ModelChoice,
    private readonly cwd: string,
    private readonly trace: TraceFile | undefined,
    private readonly interactive: boolean,
  ) {
    const ansi = useAnsi(io.stdout, io.env);
    this.style = ansi ? ansiStyle : plainStyle;
    const screen = ansi ? liveScreen(io.stdout) : plainScreen(io.stdout, io.stdout.isTTY ? io.stdout.columns : undefined);
    this.renderer = new Renderer({ screen, style: this.style });

    const pace = io.demoPace ?? 1;
    const tools = choice.offline
      ? // The demo paces its tools so spinners, progress bars and steering are visible.
        [
          listFilesTool({ cwd, minDurationMs: 400 * pace }),
          readFileTool({ cwd, minDurationMs: 300 * pace }),
          searchTextTool({ cwd, minDurationMs: 1000 * pace }),
          writeFileTool({ cwd }),
        ]
      : createWorkspaceTools({ cwd });
    const canAsk = io.stdin.isTTY === true;
    const beforeToolCall = permissionPolicy({
      decide: options.yes ? "allow" : canAsk ? (request, signal) => this.ask(request, signal) : "deny",
      denyReason: (request) =>
        canAsk
          ? `Permission denied: the user refused ${request.toolName}.`
          : `Permission denied: ${request.toolName} needs confirmation and there is no terminal to ask (stdin is not a TTY); run with --yes to allow writes.`,
    });
    this.agent = new Agent({
      initialState: { model: choice.model, systemPrompt: systemPrompt(cwd), tools, thinkingLevel: options.thinking },
      streamFn: choice.streamFn,
      beforeToolCall,
      ...(options.maxTurns !== undefined || options.maxCostUsd !== undefined
        ? { budget: { ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}), ...(options.maxCostUsd !== undefined ? { maxCostUsd: options.maxCostUsd } : {}) } }
        : {}),
      // R60, R61, R62, R67: on unless a flag turns them off.
      ...recoveryConfig(options),
      // R70: reads start while the model streams unless --no-streaming-tools.
      ...(options.streamingTools ? { streamingToolExecution: true } : {}),
      inspect: (event) => {
        this.trace?.recorder.inspect(event);
        this.inspector?.next(event);
      },
    });
    this.agent.subscribe((event) => this.onEvent(event), { runtimeEvents: true });
  }

  async start(prompt: string | undefined): Promise<number> {
    this.banner();
    await this.connectInspector();
    if (this.io.stdin.isTTY) {
      this.input = new TerminalInput(this.io.stdin, (action) => this.onAction(action), this.io.stdout.isTTY ? this.io.stdout : undefined);
      this.input.start();
    } else {
      this.removeSigint = this.io.onSigint?.(() => this.onAction({ type: "interrupt" }));
    }
    let code: number;
    if (prompt !== undefined) {
      this.echoPrompt(prompt);
      await this.runPrompt(prompt);
      code = this.pendingExit ?? this.exitCodeOfLastRun();
    } else {
      this.showIdle();
      code = await new Promise<number>((resolve) => (this.resolveExit = resolve));
    }
    await this.finish();
    return code;
  }

  // -- runs ------------------------------------------------------------------------------------

  private async runPrompt(text: string): Promise<void> {
    this.running = true;
    this.aborting = false;
    this.showRunning();
    this.spinner = setInterval(() => {
      if (this.renderer.animating) this.renderer.tick();
    }, 80);
    this.renderer.syncTranscript(this.agent.state.messages.length);
    try {
      await this.agent.prompt(text);
    } catch (error) {
      this.renderer.notice(`✗ ${(error as Error).message}`, "error");
    } finally {
      clearInterval(this.spinner);
      this.running = false;
      this.answer(false);
    }
    if (this.pendingExit !== undefined) {
      this.resolveExit?.(this.pendingExit);
      return;
    }
    if (this.interactive) this.showIdle();
  }

  private onEvent(event: AnyAgentEvent): void {
    if (isRuntimeEvent(event)) {
      // The trace format has no record for the loop's own events (R66): a note says what happened.
      this.trace?.recorder.note(describeRuntimeEvent(event, this.renderer.transcriptLength));
      this.renderer.handle(event);
      return;
    }
    this.trace?.recorder.recordEvent(event);
    this.renderer.handle(event);
    // A one-shot demo steers and follows up by itself, once the first tool runs (typed lines count too).
    if (event.type === "tool_execution_start" && this.choice.offline && !this.interactive && !this.demoInjected) {
      this.demoInjected = true;
      this.steer(DEMO_STEERING, " (sent by the demo)");
      this.followUp(DEMO_FOLLOW_UP, " (sent by the demo)");
    }
  }

  private steer(text: string, suffix = ""): void {
    this.agent.steer(userMessage(text));
    this.renderer.notice(`↳ steering: ${text}${suffix}`, "steer");
    this.trace?.recorder.note(`steering queued: ${text}`);
  }

  private followUp(text: string, suffix = ""): void {
    this.agent.followUp(userMessage(text));
    this.renderer.notice(`↳ follow-up queued: ${text}${suffix}`, "steer");
    this.trace?.recorder.note(`follow-up queued: ${text}`);
  }

  private abort(source: string): void {
    if (!this.running || this.aborting) return;
    this.aborting = true;
    this.answer(false);
    this.agent.abort();
    // Only after a Ctrl-C does one more exit; after Esc it takes two.
    this.renderer.notice(`⏹ aborting (${source}) — ${source === "Ctrl-C" ? "press Ctrl-C again to exit" : "Ctrl-C twice exits"}`, "warn");
    this.trace?.recorder.note(`abort requested (${source})`);
  }

  private exitCodeOfLastRun(): number {
    const stats = this.renderer.lastRunStats;
    if (stats?.stopReason === "error") return 1;
    if (stats?.stopReason === "aborted") return 130;
    return 0;
  }

  // -- keyboard --------------------------------------------------------------------------------

  private onAction(action: InputAction): void {
    if (action.type !== "interrupt" && action.type !== "change") this.armedAt = undefined;
    if (this.question) {
      this.onAnswerKey(action);
      return;
    }
    switch (action.type) {
      case "change":
        this.refreshInput();
        return;
      case "key":
        if (!this.renderer.isLive && !this.running) this.renderer.print(action.char);
        return;
      case "submit":
        this.onSubmit(action.text, action.alt);
        return;
      case "escape":
        if (this.running) this.abort("Esc");
        else {
          this.input?.editor.clear();
          this.refreshInput();
        }
        return;
      case "eof":
        if (!this.running) this.exit(0);
        return;
      case "interrupt":
        this.onInterrupt();
        return;
    }
  }

  private onSubmit(raw: string, alt: boolean): void {
    const text = raw.trim();
    if (!this.renderer.isLive && !this.running) this.renderer.print("\n");
    const command = parseSlashCommand(text);
    if (command) {
      this.runCommand(command);
      return;
    }
    if (this.running) {
      if (!text) return;
      if (text.startsWith(">>")) {
        const followUp = text.slice(2).trim();
        if (followUp) this.followUp(followUp);
      } else if (alt) this.followUp(unescapeSlash(text));
      else this.steer(unescapeSlash(text));
      return;
    }
    if (!this.interactive) return;
    if (!text) {
      this.showIdle();
      return;
    }
    if (this.renderer.isLive) this.echoPrompt(text);
    void this.runPrompt(text.startsWith(">>") ? text.slice(2).trim() || text : unescapeSlash(text));
  }

  /** A slash command is the CLI's own: it never reaches the model. */
  private runCommand(command: string): void {
    if (command === "exit" || command === "quit") {
      this.exit(0);
      return;
    }
    if (command === "help") this.renderer.notice(COMMANDS_HELP, "dim");
    else this.renderer.notice(`Unknown command /${command}: ${COMMAND_NAMES}. (To send a line that starts with /, start it with //.)`, "warn");
    if (this.running) this.showRunning();
    else this.showIdle();
  }

  private onInterrupt(): void {
    const now = performance.now();
    const armed = this.armedAt !== undefined;
    if (this.running) {
      if (armed && now - this.armedAt! < 2000) {
        this.exit(130);
        return;
      }
      this.armedAt = now;
      this.abort("Ctrl-C");
      return;
    }
    if (this.input && this.input.editor.buffer !== "") {
      this.input.editor.clear();
      this.refreshInput();
      this.armedAt = undefined;
      return;
    }
    if (armed || !this.interactive) {
      this.exit(this.interactive ? 0 : 130);
      return;
    }
    this.armedAt = now;
    this.renderer.notice("(press Ctrl-C again to exit)", "dim");
    this.showIdle();
  }

  /** Exits now, or once the run has stopped (it is aborted). */
  private exit(code: number): void {
    this.pendingExit = code;
    if (!this.running) {
      this.resolveExit?.(code);
      return;
    }
    this.answer(false);
    this.aborting = true;
    this.agent.abort();
    this.renderer.notice("exiting…", "dim");
    this.trace?.recorder.note("exit requested");
  }

  // -- permission ------------------------------------------------------------------------------

  private ask(request: PermissionRequest, signal?: AbortSignal): Promise<PermissionDecision> {
    if (signal?.aborted) return Promise.resolve(false);
    const args = (request.args ?? {}) as { path?: string; content?: string };
    const size = typeof args.content === "string" ? ` (${formatCount(Buffer.byteLength(args.content))} bytes)` : "";
    const text = `? allow ${request.toolName} to write ${args.path ?? "a file"}${size}? [y/N] `;
    this.trace?.recorder.note(`permission asked: ${request.toolName} ${args.path ?? ""}`.trim());
    return new Promise<PermissionDecision>((resolve) => {
      this.question = { resolve };
      signal?.addEventListener("abort", () => this.answer(false), { once: true });
      if (this.renderer.isLive) this.renderer.setQuestion(text);
      else this.renderer.print(text);
    });
  }

  /**
   * While a question is pending: y or n on an empty line answers it; Enter answers with the line
   * (y/yes allows; n/no/empty refuses) — any other line is handled as usual (a steering message) and
   * the question stays; Esc refuses; Ctrl-C refuses and aborts.
   */
  private onAnswerKey(action: InputAction): void {
    const buffer = this.input?.editor.buffer ?? "";
    switch (action.type) {
      case "key":
        if (/^[yn]$/i.test(buffer)) this.answer(/^y$/i.test(buffer));
        else this.refreshInput();
        return;
      case "change":
        this.refreshInput();
        return;
      case "submit": {
        const text = action.text.trim();
        if (/^(y|yes)$/i.test(text)) this.answer(true);
        else if (/^(n|no|)$/i.test(text)) this.answer(false);
        else this.onSubmit(action.text, action.alt);
        return;
      }
      case "escape":
      case "eof":
        this.answer(false);
        return;
      case "interrupt":
        this.answer(false);
        this.onInterrupt();
        return;
    }
  }

  /** Settles a pending question (no-op without one). */
  private answer(allow: boolean): void {
    const question = this.question;
    if (!question) return;
    this.question = undefined;
    this.input?.editor.clear();
    if (this.renderer.isLive) this.renderer.setQuestion(undefined);
    else this.renderer.print(allow ? "y\n" : "n\n");
    this.renderer.notice(allow ? "  allowed" : "  refused", allow ? "success" : "warn");
    this.trace?.recorder.note(`permission ${allow ? "granted" : "refused"}`);
    question.resolve(allow);
    this.refreshInput();
  }

  // -- screen ----------------------------------------------------------------------------------

  private banner(): void {
    const s = this.style;
    const label = this.choice.offline ? s.yellow(this.choice.label) : s.bold(this.choice.label);
    this.renderer.print(`${label}\n`);
    if (this.choice.warning) this.renderer.notice(this.choice.warning, "warn");
    const parts = [`cwd ${this.cwd}`];
    if (this.options.trace) parts.push(`trace → ${this.options.trace}`);
    if (this.options.yes) parts.push("writes allowed (--yes)");
    else if (!this.io.stdin.isTTY) parts.push("writes denied (no terminal to ask; --yes allows)");
    this.renderer.notice(parts.join(" · "), "dim");
    if (this.io.stdin.isTTY) {
      this.renderer.notice("while it works: Enter steers · >> text queues a follow-up · Esc/Ctrl-C aborts · Ctrl-C twice exits", "dim");
    }
  }

  private echoPrompt(text: string): void {
    this.renderer.print(`${this.style.bold(this.style.cyan("❯"))} ${this.style.bold(shortPrompt(text))}\n`);
  }

  private showIdle(): void {
    if (!this.interactive) return;
    if (this.renderer.isLive) this.renderer.setInput({ prompt: this.style.bold(this.style.cyan("❯ ")), buffer: this.input?.editor.buffer ?? "", hint: "ask something (Ctrl-C twice to exit)" });
    else this.renderer.print("❯ ");
  }

  private showRunning(): void {
    if (!this.input) {
      this.renderer.setInput(undefined);
      return;
    }
    this.renderer.setInput({ prompt: this.style.dim("› "), buffer: this.input.editor.buffer, hint: "type + Enter to steer · >> follow-up · Esc to abort" });
  }

  private refreshInput(): void {
    if (!this.renderer.isLive) return;
    if (this.running) this.showRunning();
    else this.showIdle();
  }

  private async connectInspector(): Promise<void> {
    if (!this.options.inspect) return;
    const connection = await connectInspector(this.io.inspector);
    this.inspector = connection.inspector;
    this.relay = connection.relay;
    this.renderer.notice(connection.notice, connection.tone);
  }

  private async finish(): Promise<void> {
    this.removeSigint?.();
    this.input?.stop();
    this.renderer.setInput(undefined);
    this.renderer.close();
    this.trace?.close();
    await this.inspector?.close().catch(() => {});
    this.relay?.stop();
  }
}

function systemPrompt(cwd: string): string {
  return [
    `You are a coding assistant in a terminal, working in the directory ${cwd}.`,
    "Use the tools to look at the files before you answer: list_files, read_file (with line ranges for long files), search_text.",
    "write_file changes the user's files and may be refused; say so when it is.",
    "Paths are relative to the working directory and cannot leave it. Be concise: the answer is read in a terminal.",
  ].join("\n");
}

/** The CLI's own commands: a line `/word` (a path like `/usr/bin …` is not one). */
const COMMAND_NAMES = "/help, /exit (or /quit)";
const COMMANDS_HELP = [
  "commands: /help this help · /exit, /quit leave (also Ctrl-D on an empty line, or Ctrl-C twice)",
  "at the prompt: Enter sends · a bracketed paste keeps its line breaks · Ctrl-U clears · Ctrl-W deletes a word",
  "while it works: Enter steers · >> text queues a follow-up · Esc or Ctrl-C aborts · y/n answers a write question",
].join("\n");

export function parseSlashCommand(text: string): string | undefined {
  return /^\/([a-z][\w-]*)$/i.exec(text)?.[1]?.toLowerCase();
}

/** `//text` sends `/text`. */
const unescapeSlash = (text: string) => (text.startsWith("//") ? text.slice(1) : text);

/** Echoes of long prompts (a paste) are cut: the whole text goes to the model, and to the trace. */
const ECHO_LIMIT = 400;
export function shortPrompt(text: string): string {
  if (text.length <= ECHO_LIMIT) return text;
  return `${text.slice(0, ECHO_LIMIT)}… (${formatCount(text.length)} characters in all)`;
}

const userMessage = (text: string): AgentMessage => ({ role: "user", content: [{ type: "text", text }], timestamp: Date.now() });

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = "";
  for await (const chunk of stream) text += typeof chunk === "string" ? chunk : (chunk as Buffer).toString("utf8");
  return text;
}
