/**
 * The terminal agent: parses the arguments, picks the model, opens the session store (issue 20:
 * sessions.ts), builds the tools (writes wait for approval, R82), the renderer, the trace and the
 * inspector, and drives a durable `Agent` from the keyboard: one-shot (a prompt on the command
 * line) or a prompt loop, or `--resume` of a stored session. While a run is going, Enter sends a
 * steering message, `>>` (or Alt+Enter) queues a follow-up, Esc or Ctrl-C aborts the run, and a
 * second Ctrl-C exits.
 */
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { Agent, isRuntimeEvent } from "../../index.js";
import { SessionLockedError, StoreEngineUnavailableError, StoreLockError, type Json, type RunStore } from "../../store/index.js";
import type { AgentMessage, AgentTool, AnyAgentEvent, ToolApprovalRequest } from "../../types.js";
import type { AgentOptions } from "../../agent/types.js";
import type { EventDelivery } from "../../durable/delivery.js";
import { openSqliteStore } from "../../sqlite.js";
import { createWorkspaceTools, listFilesTool, readFileTool, searchTextTool, writeFileTool } from "../tools/index.js";
import { parseCliArgs, USAGE, type CliOptions } from "./args.js";
import { formatCount } from "./format.js";
import { connectInspector, connectLiveInspector, type Inspector, type InspectorRelay, type InspectorSetup } from "./inspector.js";
import { TerminalInput, type InputAction, type KeyboardStream } from "./input.js";
import type { ModelChoice } from "./model.js";
import { chooseSessionModel } from "./provider-model.js";
import { DEMO_FOLLOW_UP, DEMO_STEERING } from "./offline-demo.js";
import { recoveryConfig } from "./recovery.js";
import { Renderer } from "./renderer.js";
import { describeRuntimeEvent } from "./runtime-notes.js";
import { liveScreen, plainScreen, type Output } from "./screen.js";
import { ansiStyle, plainStyle, useAnsi, type Style } from "./style.js";
import { openTraceFile, type TraceFile } from "./trace-file.js";
import { readVersion } from "./version.js";
import { startOtelExport, type OtelExport } from "./otel.js";
import { formatSessionList, metaOf, newSessionId, sessionStoreDir, STORE_FILE, type SessionMeta } from "./sessions.js";
import { RESTORED_DIVIDER, showTranscript, userLine } from "./transcript.js";
import { approvalQuestion, parseApprovalAnswer, type ApprovalAnswer } from "./write-approval.js";
import { McpConfigError, readMcpServers, type CliMcpServer } from "./mcp-config.js";
import { gateProjectServers, readLine } from "./mcp-approvals.js";
import { formatMcpStatus, mcpApprovalQuestion, startCliMcp } from "./mcp-session.js";
import type { McpClient } from "../../mcp/mcp-client.js";

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
  /** Opens the session store (default `openSqliteStore`; tests replace it, e.g. with no engine). */
  openStore?: (file: string) => RunStore;
}

/** Exit codes: 0 done, 1 the run failed (provider error), 2 bad usage, 130 aborted (one-shot); main.ts adds 74 (output unwritable). */
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
  const storeDir = sessionStoreDir(cwd, io.env);
  const storeFile = path.join(storeDir, STORE_FILE);
  if (options.sessions) {
    // Listing creates nothing: no store file, no sessions.
    if (!existsSync(storeFile)) {
      io.stdout.write(formatSessionList([], storeFile));
      return 0;
    }
    const listed = openStore(storeFile, io);
    if (!listed || listed === "no engine") return 2;
    try {
      const sessions = listed.listSessions();
      // R84: which sessions another process has open now. A lock file that cannot be used (a hostile
      // layout of the store's lock directory) says nothing about its session: listed, and said once.
      let unusableLock: StoreLockError | undefined;
      const open = new Map(sessions.flatMap((info) => {
        let holder: { pid?: number } | undefined;
        try {
          holder = listed.holderOf?.(info.sessionId);
        } catch (error) {
          if (!(error instanceof StoreLockError)) throw error;
          unusableLock ??= error;
        }
        return holder ? [[info.sessionId, holder.pid] as const] : [];
      }));
      if (unusableLock) io.stderr.write(`warning: which sessions are open elsewhere is unknown: ${unusableLock.message}\n`);
      io.stdout.write(formatSessionList(sessions, storeFile, open));
    } finally {
      listed.close();
    }
    return 0;
  }
  let prompt = options.prompt;
  const interactive = prompt === undefined && io.stdin.isTTY === true;
  if (prompt === undefined && !interactive) {
    prompt = (await readAll(io.stdin)).trim();
    // `--resume` without a prompt just continues the session.
    if (!prompt && options.resume !== undefined) prompt = undefined;
    else if (!prompt) {
      io.stderr.write(`error: no prompt: give one as an argument, pipe one on stdin, or run on a terminal for a prompt loop\n\n${USAGE}`);
      return 2;
    }
  }

  let mcpServers: CliMcpServer[];
  try {
    mcpServers = readMcpServers(cwd, options.mcpConfig, io.env, io.cwd);
  } catch (error) {
    if (!(error instanceof McpConfigError)) throw error;
    io.stderr.write(`error: ${error.message}\n`);
    return 2;
  }
  const chosen = await chooseSessionModel(options, io.env, io.demoPace ?? 1);
  if ("error" in chosen) {
    io.stderr.write(`error: ${chosen.error}\n`);
    return 2;
  }
  const choice = chosen;
  let trace: TraceFile | undefined;
  if (options.trace !== undefined) {
    try {
      trace = openTraceFile(path.resolve(io.cwd, options.trace), {
        model: choice.model,
        cwd,
        secrets: [io.env.ANTHROPIC_API_KEY, ...(choice.secrets ?? [])].filter((value): value is string => !!value),
      });
    } catch (error) {
      io.stderr.write(`error: ${(error as Error).message}\n`);
      return 2;
    }
  }
  let sessions: SessionStore | undefined;
  let unsaved: string | undefined;
  // No SQLite engine (Node 20 without better-sqlite3): a new session runs unsaved, with a warning.
  const opened = options.save ? openStore(storeFile, io, options.resume === undefined) : undefined;
  if (opened === "no engine") {
    unsaved = "sessions are not saved: no SQLite engine (Node ≥ 22.13 has one built in; on Node 20: npm install better-sqlite3@12)";
  } else if (options.save) {
    const store = opened;
    if (!store) {
      trace?.close();
      return 2;
    }
    const picked = options.resume === undefined ? newSessionId() : pickSession(store, options.resume, io);
    const sessionId = picked !== undefined && options.resume !== undefined && sessionInUse(store, picked, io) ? undefined : picked;
    if (sessionId === undefined) {
      store.close();
      trace?.close();
      return 2;
    }
    sessions = { store, storeDir, sessionId, resumed: options.resume !== undefined, created: options.resume !== undefined, firstPrompt: "" };
  }
  // --otel: loaded before the session (its Agent attaches the observer when it is made).
  let otel: OtelExport | undefined;
  if (options.otel) {
    const started = await startOtelExport(io.env, [io.env.ANTHROPIC_API_KEY].filter((value): value is string => !!value));
    if ("error" in started) io.stderr.write(`warning: ${started.error}; continuing without telemetry\n`);
    else otel = started;
  }
  const session = new CliSession(io, options, choice, cwd, trace, interactive, storeDir, sessions, unsaved, mcpServers, otel);
  return session.start(prompt);
}

/** The session store of this run: where, which session, and whether it exists yet. */
interface SessionStore {
  store: RunStore;
  storeDir: string;
  sessionId: string;
  resumed: boolean;
  /** The session is in the store (a new one is created at its first prompt). */
  created: boolean;
  firstPrompt: string;
}

/** The store, or `undefined` after saying why not; `"no engine"` (said by the caller) when that may run unsaved. */
function openStore(file: string, io: CliIO, mayRunUnsaved = false): RunStore | "no engine" | undefined {
  try {
    return (io.openStore ?? openSqliteStore)(file);
  } catch (error) {
    if (mayRunUnsaved && error instanceof StoreEngineUnavailableError) return "no engine";
    io.stderr.write(`error: cannot open the session store ${file}: ${(error as Error).message}\n(--no-save runs without it)\n`);
    return undefined;
  }
}

/** `--resume`'s session: the given id, or the last one updated (`""`). */
function pickSession(store: RunStore, wanted: string, io: CliIO): string | undefined {
  if (wanted === "") {
    const last = store.listSessions()[0];
    if (!last) io.stderr.write("error: --resume: no saved session for this directory (--sessions lists them)\n");
    return last?.sessionId;
  }
  if (!store.hasSession(wanted)) {
    io.stderr.write(`error: --resume: no session ${JSON.stringify(wanted)} for this directory (--sessions lists them)\n`);
    return undefined;
  }
  return wanted;
}

/** R84: one writer per session; a session another process has open is refused before anything runs. */
function sessionInUse(store: RunStore, sessionId: string, io: CliIO): boolean {
  try {
    store.openSession(sessionId, { create: false }).release();
    return false;
  } catch (error) {
    if (error instanceof StoreLockError) {
      io.stderr.write(`error: --resume: ${error.message}\n`);
      return true;
    }
    if (!(error instanceof SessionLockedError)) throw error;
    io.stderr.write(
      `error: --resume: session ${sessionId} is open in another process${error.pid !== undefined ? ` (pid ${error.pid})` : ""}; quit it there first, or resume another session (--sessions lists them)\n`,
    );
    return true;
  }
}

class CliSession {
  private readonly style: Style;
  private readonly renderer: Renderer;
  private readonly agent: Agent;
  private input?: TerminalInput;
  private inspector?: Inspector;
  private relay?: InspectorRelay;
  private readonly forkOptions: () => AgentOptions;
  private running = false;
  private aborting = false;
  /** A Ctrl-C was the last key: another one exits. */
  private armedAt: number | undefined;
  /** The write being asked about now; the rest wait their turn (asked in order). */
  private question?: ToolApprovalRequest;
  private readonly approvalQueue: ToolApprovalRequest[] = [];
  /** Approval ids asked or answered already (a resumed session lists its waiting calls again). */
  private readonly seenApprovals = new Set<string>();
  private pendingExit: number | undefined;
  private resolveExit!: (code: number) => void;
  private readonly exitRequested = new Promise<number>((resolve) => (this.resolveExit = resolve));
  /**
   * While `--resume` restores a session: the stored transcript is drawn once, then the unfinished
   * run's replayed events as the live run drew them; `liveSeq`: its first live event's number.
   */
  private restoring: { liveSeq: number | undefined; drawnSeq: number; storedDrawn: boolean; drawn: boolean; divided: boolean } | undefined;
  /** A resumed run has delivered no live event yet (its waiting calls are looked for in the state). */
  private replaying = false;
  private spinner?: ReturnType<typeof setInterval>;
  private demoInjected = false;
  /** The user left while a write waited (the run stays unfinished in the store). */
  private leftWaiting = false;
  private removeSigint?: () => void;
  /** The MCP servers' client, once they started (mcp-session.ts). */
  private mcp?: McpClient;

  constructor(
    private readonly io: CliIO,
    private readonly options: CliOptions,
    private readonly choice: ModelChoice,
    private readonly cwd: string,
    private readonly trace: TraceFile | undefined,
    private readonly interactive: boolean,
    storeDir: string,
    private readonly sessions: SessionStore | undefined,
    /** Why a session that should be saved is not (no SQLite engine). */
    private readonly unsaved?: string,
    /** MCP servers of .mcp.json and --mcp-config (started in `start`). */
    private readonly mcpServers: readonly CliMcpServer[] = [],
    private readonly otel?: OtelExport,
  ) {
    const ansi = useAnsi(io.stdout, io.env);
    this.style = ansi ? ansiStyle : plainStyle;
    const screen = ansi ? liveScreen(io.stdout) : plainScreen(io.stdout, io.stdout.isTTY ? io.stdout.columns : undefined);
    this.renderer = new Renderer({ screen, style: this.style });

    const pace = io.demoPace ?? 1;
    // Every directory's session store is off limits to the tools, even when the workspace contains
    // them (cwd = $HOME): the model must not read other sessions nor forge approvals.
    const deniedPaths = [path.dirname(storeDir)];
    const tools = (
      choice.offline
        ? // The demo paces its tools so spinners, progress bars and steering are visible.
          [
            listFilesTool({ cwd, minDurationMs: 400 * pace, deniedPaths }),
            readFileTool({ cwd, minDurationMs: 300 * pace, deniedPaths }),
            searchTextTool({ cwd, minDurationMs: 1000 * pace, deniedPaths }),
            writeFileTool({ cwd, deniedPaths }),
          ]
        : createWorkspaceTools({ cwd, deniedPaths })
    ).map((tool) => (tool.name === "write_file" && !options.yes ? askBeforeWriting(tool) : tool));
    const common: AgentOptions = {
      initialState: { model: choice.model, systemPrompt: systemPrompt(cwd), tools, thinkingLevel: options.thinking },
      streamFn: choice.streamFn,
      ...(options.maxTurns !== undefined || options.maxCostUsd !== undefined
        ? { budget: { ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}), ...(options.maxCostUsd !== undefined ? { maxCostUsd: options.maxCostUsd } : {}) } }
        : {}),
      // R60, R61, R62, R67: on unless a flag turns them off.
      ...recoveryConfig(options),
      // R70: reads start while the model streams unless --no-streaming-tools.
      ...(options.streamingTools ? { streamingToolExecution: true } : {}),
      // R30: an MCP server's tools/list_changed reaches the next turn of a run.
      ...(mcpServers.length > 0 ? { prepareNextTurnWithContext: (turn: Parameters<McpClient["prepareNextTurn"]>[0]) => this.mcp?.prepareNextTurn(turn) } : {}),
    };
    // A fork in the live inspector runs with this session's implementations: its model and its tools as they are now (MCP's included).
    this.forkOptions = () => ({ ...common, initialState: { ...common.initialState, model: this.agent.state.model, tools: this.agent.state.tools } });
    this.agent = new Agent({
      ...common,
      ...(sessions ? { durable: { store: sessions.store, sessionId: sessions.sessionId } } : {}),
      // Observers compose: the trace and the inspector (both set up later), and the OpenTelemetry export.
      inspect: [
        (event) => {
          this.trace?.recorder.inspect(event);
          this.inspector?.next(event);
          // A resumed run replays silently: a call it leaves waiting is found in the state, not in an event (R82).
          if (this.replaying) queueMicrotask(() => this.askWaitingApprovals());
        },
        ...(otel ? [otel.observer] : []),
      ],
    });
    this.agent.subscribe((event, _signal, delivery) => this.onEvent(event, delivery), { runtimeEvents: true });
  }

  async start(prompt: string | undefined): Promise<number> {
    this.banner();
    await this.startMcp();
    await this.connectInspector();
    this.announceOtel();
    if (this.io.stdin.isTTY) {
      this.input = new TerminalInput(this.io.stdin, (action) => this.onAction(action), this.io.stdout.isTTY ? this.io.stdout : undefined);
      this.input.start();
    } else {
      this.removeSigint = this.io.onSigint?.(() => this.onAction({ type: "interrupt" }));
    }
    let code: number | undefined;
    if (this.sessions?.resumed) code = await Promise.race([this.resumeSession(), this.exitRequested]);
    if (code === undefined && prompt !== undefined) {
      this.echoPrompt(prompt);
      // Quitting while a write waits leaves the run as it is (the store keeps it): no waiting for its end.
      await Promise.race([this.runPrompt(prompt), this.exitRequested]);
      code = this.pendingExit ?? this.exitCodeOfLastRun();
    } else if (code === undefined && this.interactive) {
      this.showIdle();
      code = await this.exitRequested;
    }
    await this.finish();
    return code ?? this.pendingExit ?? this.exitCodeOfLastRun();
  }

  /**
   * `--resume`: the stored transcript is shown again, then an unfinished run (a crash, a quit
   * while a write waited) continues (R81). Resolves with an exit code when the user left meanwhile.
   */
  private async resumeSession(): Promise<number | undefined> {
    const sessions = this.sessions!;
    const info = sessions.store.readSession(sessions.sessionId).info();
    const meta = metaOf(info);
    sessions.firstPrompt = meta.firstPrompt ?? "";
    this.renderer.notice(`resuming session ${sessions.sessionId}`, "dim");
    this.demoInjected = true;
    this.running = true;
    this.aborting = false;
    this.replaying = true;
    const restoring = (this.restoring = { liveSeq: undefined as number | undefined, drawnSeq: 0, storedDrawn: false, drawn: false, divided: false });
    let resuming: Promise<boolean>;
    try {
      this.markRunning(true);
      // R81: the listeners get the unfinished run whole, from its agent_start (the events its journal
      // replays included): the screen draws it as the live run did (tool rows, markdown, its turns).
      // resume() adopts the stored session (the transcript up to that run) before its first await.
      const after = this.agent.sequence?.runStartAfter ?? "journal";
      resuming = this.agent.resume({
        after,
        onLive: ({ seq }) => {
          restoring.liveSeq = seq;
          if (restoring.drawnSeq >= seq - 1) this.restoredDivider();
        },
      });
    } catch (error) {
      this.running = false;
      this.restoring = undefined;
      this.replaying = false;
      this.renderer.notice(`✗ cannot resume ${sessions.sessionId}: ${(error as Error).message}`, "error");
      return 2;
    }
    this.drawStored();
    // The trace: its run starts here (what came before is in the session's journal: exportSessionTrace).
    this.trace?.recorder.note(`resumed session ${sessions.sessionId}: the run's earlier events were replayed from its journal`);
    this.trace?.recorder.recordEvent({ type: "agent_start" });
    this.showRunning();
    this.spinner = setInterval(() => {
      if (this.renderer.animating) this.renderer.tick();
    }, 80);
    let unfinished = false;
    try {
      unfinished = await resuming;
    } catch (error) {
      this.renderer.notice(`✗ ${(error as Error).message}`, "error");
    } finally {
      clearInterval(this.spinner);
      this.drawStored();
      this.restoredDivider();
      this.restoring = undefined;
      this.renderer.syncTranscript(this.agent.state.messages.length);
      this.replaying = false;
      this.running = false;
      this.closeQuestion();
      this.markRunning(false);
    }
    if (!unfinished) this.renderer.notice("(the session had no unfinished run)", "dim");
    // Later prompts use this invocation's model and thinking level (the session kept its own).
    const stored = this.agent.state.model;
    if (stored.id !== this.choice.model.id || stored.provider !== this.choice.model.provider) {
      this.renderer.notice(`the session used ${stored.id}; it continues with ${this.choice.model.id}`, "dim");
      this.agent.state.model = this.choice.model;
    }
    if (this.agent.state.thinkingLevel !== this.options.thinking) this.agent.state.thinkingLevel = this.options.thinking;
    if (this.pendingExit !== undefined) return this.pendingExit;
    return undefined;
  }

  /**
   * The stored transcript up to the unfinished run (its last quiet point), once: before the first
   * replayed event reaches the screen (the state holds exactly that transcript until then).
   */
  private drawStored(): void {
    const restoring = this.restoring;
    if (!restoring || restoring.storedDrawn) return;
    restoring.storedDrawn = true;
    const messages = this.agent.state.messages;
    if (messages.some((message) => message.role !== "system")) restoring.drawn = true;
    showTranscript(messages, this.renderer, this.style);
    this.renderer.syncTranscript(messages.length);
  }

  /** One of the unfinished run's events its journal replayed (delivered before the crash): drawn only, as the live run drew it. */
  private drawReplayed(event: AnyAgentEvent, seq: number): void {
    const restoring = this.restoring!;
    this.drawStored();
    restoring.drawn = true;
    // The live screen echoed the prompt as it was typed (the renderer leaves user messages to the app).
    if (event.type === "message_end" && event.message.role === "user") this.renderer.print(userLine(event.message, this.style));
    this.renderer.handle(event);
    restoring.drawnSeq = seq;
    if (restoring.liveSeq !== undefined && seq >= restoring.liveSeq - 1) this.restoredDivider();
  }

  /** The one divider between the restored session and what this process adds to it. */
  private restoredDivider(): void {
    const restoring = this.restoring;
    if (!restoring || restoring.divided || !restoring.drawn) return;
    restoring.divided = true;
    this.renderer.divider(RESTORED_DIVIDER);
  }

  /** The session's meta: written while no run holds the session (before and after each run). */
  private markRunning(running: boolean): void {
    const sessions = this.sessions;
    if (!sessions) return;
    const meta: SessionMeta = { cwd: this.cwd, firstPrompt: sessions.firstPrompt, messages: this.agent.state.messages.length, running };
    try {
      // R84: with the Agent's own lock (it holds the session from its first use until the CLI exits).
      this.agent.setSessionMeta(meta as unknown as Json);
      sessions.created = true;
    } catch (error) {
      // Another process holds the session (R84): say so; this run cannot journal either.
      this.renderer.notice(`⚠ session ${sessions.sessionId}: ${(error as Error).message}`, "warn");
    }
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
    if (this.sessions && !this.sessions.created) this.sessions.firstPrompt = text.slice(0, 200);
    this.markRunning(true);
    try {
      if (this.mcp) {
        // A server's tool list that changed since the last run (R30 announces the difference).
        await this.mcp.settled();
        this.agent.state.tools = this.mcp.withTools(this.agent.state.tools);
      }
      await this.agent.prompt(text);
    } catch (error) {
      this.renderer.notice(`✗ ${(error as Error).message}`, "error");
    } finally {
      clearInterval(this.spinner);
      this.running = false;
      this.closeQuestion();
      if (this.pendingExit === undefined || !this.leftWaiting) this.markRunning(false);
    }
    if (this.pendingExit !== undefined) {
      this.resolveExit?.(this.pendingExit);
      return;
    }
    if (this.interactive) this.showIdle();
  }

  private onEvent(event: AnyAgentEvent, delivery: EventDelivery | undefined): void {
    const restoring = this.restoring;
    if (restoring && delivery) {
      if (restoring.liveSeq === undefined || delivery.seq < restoring.liveSeq) return this.drawReplayed(event, delivery.seq);
      this.restoredDivider();
    }
    // A resumed run is live: what waits is asked.
    if (this.replaying) {
      this.askWaitingApprovals();
      this.replaying = false;
    }
    if (event.type === "tool_approval_requested") this.onApprovalRequested(event);
    else if (event.type === "tool_approval_resolved" && this.question?.approvalId === event.approvalId) this.closeQuestion();
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
    this.closeQuestion();
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
    else if (command === "mcp") this.renderer.notice(formatMcpStatus(this.mcp?.status() ?? [], this.style), "dim", { styled: true });
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

  /**
   * Exits now, or once the run has stopped (it is aborted). While a write waits in a saved session
   * it exits at once and leaves the run waiting: `--resume` asks again.
   */
  private exit(code: number): void {
    this.pendingExit = code;
    if (!this.running) {
      this.resolveExit(code);
      return;
    }
    if (this.question && this.sessions) {
      this.leftWaiting = true;
      this.renderer.setQuestion(undefined);
      this.renderer.notice(`left with the write waiting: --resume ${this.sessions.sessionId} asks again`, "dim");
      this.trace?.recorder.note("exit requested; the write stays waiting in the session");
      this.resolveExit(code);
      return;
    }
    this.closeQuestion();
    this.aborting = true;
    this.agent.abort();
    this.renderer.notice("exiting…", "dim");
    this.trace?.recorder.note("exit requested");
  }

  // -- write approvals (R82) ----------------------------------------------------------------

  private onApprovalRequested(request: ToolApprovalRequest): void {
    if (this.seenApprovals.has(request.approvalId)) return;
    this.seenApprovals.add(request.approvalId);
    if (this.options.yes) {
      // Only a resumed session's waiting write gets here: --yes approves it.
      this.decide(request, "yes");
      return;
    }
    if (this.io.stdin.isTTY !== true) {
      this.trace?.recorder.note(`permission refused (no terminal): ${request.toolName}`);
      this.reject(request, `Permission denied: ${request.toolName} needs confirmation and there is no terminal to ask (stdin is not a TTY); run with --yes to allow writes.`);
      return;
    }
    this.approvalQueue.push(request);
    if (!this.question) this.askNext();
  }

  /** A resumed run's waiting calls emit no second request event: they are asked from `pendingApprovals`. */
  private askWaitingApprovals(): void {
    if (this.restoring === undefined) return;
    const waiting = this.agent.pendingApprovals.filter((request) => !this.seenApprovals.has(request.approvalId));
    if (waiting.length === 0) return;
    for (const request of waiting) this.onApprovalRequested(request);
  }

  private askNext(): void {
    const request = this.approvalQueue.shift();
    if (!request) return;
    this.question = request;
    const text = mcpApprovalQuestion(request, this.mcp) ?? approvalQuestion(request);
    this.trace?.recorder.note(`permission asked: ${request.toolName} ${(request.args as { path?: string } | undefined)?.path ?? ""}`.trim());
    if (this.renderer.isLive) this.renderer.setQuestion(text);
    else this.renderer.print(text);
  }

  /**
   * While a question is pending: y, n or a on an empty line answers it; Enter answers with the line
   * (y/yes allows, a/always allows this path from now on; n/no/empty refuses) — any other line is
   * handled as usual (a steering message, /exit) and the question stays; Esc refuses; Ctrl-C
   * refuses and aborts; Ctrl-D leaves with the write waiting (a saved session asks again on --resume).
   */
  private onAnswerKey(action: InputAction): void {
    const buffer = this.input?.editor.buffer ?? "";
    switch (action.type) {
      case "key": {
        const answer = /^[yna]$/i.test(buffer) ? parseApprovalAnswer(buffer) : undefined;
        if (answer) this.answer(answer);
        else this.refreshInput();
        return;
      }
      case "change":
        this.refreshInput();
        return;
      case "submit": {
        const answer = parseApprovalAnswer(action.text);
        if (answer) this.answer(answer);
        else this.onSubmit(action.text, action.alt);
        return;
      }
      case "escape":
        this.answer("no");
        return;
      case "eof":
        this.exit(0);
        return;
      case "interrupt":
        this.answer("no");
        this.onInterrupt();
        return;
    }
  }

  /** Answers the pending question (no-op without one). */
  private answer(answer: ApprovalAnswer): void {
    const request = this.question;
    if (!request) return;
    this.closeQuestion(answer);
    this.decide(request, answer);
    this.askNext();
  }

  private decide(request: ToolApprovalRequest, answer: ApprovalAnswer): void {
    const path = (request.args as { path?: unknown } | undefined)?.path;
    try {
      if (answer === "no") this.reject(request, `Permission denied: the user refused ${request.toolName}.`);
      else if (answer === "always") this.agent.approve(request.approvalId, typeof path === "string" ? { always: { path } } : { always: true });
      else this.agent.approve(request.approvalId, {});
    } catch (error) {
      // Settled meanwhile (an abort): nothing to decide any more.
      this.renderer.notice(`  (${(error as Error).message})`, "dim");
    }
  }

  private reject(request: ToolApprovalRequest, reason: string): void {
    try {
      this.agent.reject(request.approvalId, reason);
    } catch (error) {
      this.renderer.notice(`  (${(error as Error).message})`, "dim");
    }
  }

  /** Takes the question off the screen, saying how it was answered (settled elsewhere: silently). */
  private closeQuestion(answer?: ApprovalAnswer): void {
    if (!this.question) return;
    const scope = this.mcp?.toolInfo(this.question.toolName) ? "this tool" : "this path";
    this.question = undefined;
    this.input?.editor.clear();
    if (this.renderer.isLive) this.renderer.setQuestion(undefined);
    else if (answer) this.renderer.print(`${answer === "yes" ? "y" : answer === "always" ? "a" : "n"}\n`);
    if (answer) {
      const allowed = answer !== "no";
      this.renderer.notice(answer === "always" ? `  allowed (always, for ${scope})` : allowed ? "  allowed" : "  refused", allowed ? "success" : "warn");
      this.trace?.recorder.note(`permission ${allowed ? "granted" : "refused"}`);
    } else {
      this.approvalQueue.length = 0;
    }
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
    if (this.options.yes) parts.push("writes approved (--yes)");
    else if (!this.io.stdin.isTTY) parts.push("writes rejected (no terminal to ask; --yes approves)");
    parts.push(this.sessions ? `session ${this.sessions.sessionId}` : this.unsaved ? "not saved" : "not saved (--no-save)");
    this.renderer.notice(parts.join(" · "), "dim");
    if (this.unsaved) this.renderer.notice(`⚠ ${this.unsaved}`, "warn");
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

  /**
   * Starts the configured MCP servers: a project server not seen before is asked about first (on
   * the terminal, before the prompt editor takes the keyboard), then their tools join the built-in
   * ones, whose names they cannot take.
   */
  private async startMcp(): Promise<void> {
    if (this.mcpServers.length === 0) return;
    const gate = await gateProjectServers(this.mcpServers, {
      stateDir: sessionStoreDir(this.cwd, this.io.env),
      yes: this.options.yes,
      ...(this.io.stdin.isTTY ? { ask: (question: string) => readLine(this.io.stdin, this.io.stdout, question) } : {}),
    });
    for (const notice of gate.notices) this.renderer.notice(`⚠ ${notice}`, "warn");
    if (gate.allowed.length === 0) return;
    const mcp = await startCliMcp({
      servers: gate.allowed,
      reservedNames: this.agent.state.tools.map((tool) => tool.name),
      yes: this.options.yes,
      version: readVersion(),
      onWarning: (message) => this.renderer.notice(`⚠ ${message}`, "warn"),
    });
    this.mcp = mcp;
    this.agent.state.tools = mcp.withTools(this.agent.state.tools);
    mcp.onToolsChanged(() => {
      if (!this.running) this.agent.state.tools = mcp.withTools(this.agent.state.tools);
    });
    const started = mcp.status().filter((server) => server.state === "connected");
    if (started.length > 0) this.renderer.notice(`MCP: ${started.map((server) => `${server.name} (${server.tools.length} tools)`).join(", ")} · /mcp lists them`, "dim");
  }

  private async connectInspector(): Promise<void> {
    if (!this.options.inspect) return;
    const sessions = this.sessions;
    const connection =
      this.options.inspectWith === "stately"
        ? await connectInspector(this.io.inspector)
        : await connectLiveInspector(this.io.inspector, {
            sessionId: sessions?.sessionId,
            // A saved session can be forked from the page (time travel), with this session's model and tools.
            ...(sessions
              ? { fork: { store: sessions.store, sessionId: sessions.sessionId, options: this.forkOptions, paidModel: this.choice.offline ? undefined : this.choice.model.id } }
              : {}),
          });
    this.inspector = connection.inspector;
    this.relay = connection.relay;
    this.renderer.notice(connection.notice, connection.tone);
  }

  private announceOtel(): void {
    if (this.otel) this.renderer.notice(`otel: exporting the session's spans by OTLP/HTTP to ${this.otel.url}, its metrics to ${this.otel.metricsUrl}`, "info");
  }

  private async finish(): Promise<void> {
    clearInterval(this.spinner);
    this.removeSigint?.();
    this.input?.stop();
    this.renderer.setInput(undefined);
    this.renderer.close();
    this.trace?.close();
    await this.inspector?.close().catch(() => {});
    this.relay?.stop();
    await this.mcp?.close();
    await this.otel?.shutdown();
    // Releases the session's lock; a run left waiting for a write stays unfinished in the store.
    this.sessions?.store.close();
  }
}

/** `write_file` waits in the approval state (R82) before it runs. */
function askBeforeWriting(tool: AgentTool): AgentTool {
  return { ...tool, needsApproval: true };
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
const COMMAND_NAMES = "/help, /mcp, /exit (or /quit)";
const COMMANDS_HELP = [
  "commands: /help this help · /mcp the MCP servers and their tools · /exit, /quit leave (also Ctrl-D on an empty line, or Ctrl-C twice)",
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
