/** Command-line arguments of the terminal agent. */
import { parseArgs } from "node:util";
import type { ThinkingLevel } from "../../types.js";

/**
 * The newest Sonnet the installed @anthropic-ai/sdk knows (it warns that claude-sonnet-4-5 reaches
 * end-of-life on 2026-11-30); the provider's price table has its figures.
 */
export const DEFAULT_MODEL = "claude-sonnet-5-5";
const THINKING_LEVELS: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

export interface CliOptions {
  /** The one-shot prompt (positional words joined); absent for the interactive session. */
  prompt?: string;
  offline: boolean;
  /** `provider:id` or a bare Claude model id (src/node/cli/provider-model.ts); absent means DEFAULT_MODEL, or the offline demo without a key. */
  model?: string;
  /** `--base-url`: the provider's endpoint (an OpenAI-compatible server, Ollama, a proxy). */
  baseUrl?: string;
  thinking: ThinkingLevel;
  /** Allow write_file without asking. */
  yes: boolean;
  trace?: string;
  inspect: boolean;
  /** `--inspect=stately`: the Stately inspector's relay instead of the live local page. */
  inspectWith?: "stately";
  /** `--otel`: export OpenTelemetry spans by OTLP/HTTP (src/node/cli/otel.ts). */
  otel: boolean;
  /** Working directory the tools are confined to. */
  cwd?: string;
  /** SPEC R63: each run's limits. */
  maxTurns?: number;
  maxCostUsd?: number;
  /** SPEC R60: the loop retries transient failures (default on; `--no-retry`). */
  retry: boolean;
  /** SPEC R60: attempts per request, the first included (`--max-attempts`; absent: the loop's default, 5). */
  maxAttempts?: number;
  /** SPEC R61: escalate, then ask the model to continue, when an answer hits the output limit (default on). */
  outputLimitRecovery: boolean;
  /** SPEC R67: ms an abort waits for tools and hooks that ignore it; absent with `--no-abort-grace` (wait for them). */
  abortGraceMs?: number;
  /** SPEC R62: summarize older turns when the prompt no longer fits the context window (default on; `--no-compact`). */
  compact: boolean;
  /** SPEC R62: also compact before a request above this many estimated tokens (`--compact-at`; off when absent: it spends model calls). */
  compactAtTokens?: number;
  /** SPEC R70: tools start while the model streams (default on; `--no-streaming-tools`). */
  streamingTools: boolean;
  /** Issue 20: keep the session in the store (default; `--no-save` turns it off). */
  save: boolean;
  /** `--resume [id]`: continue a stored session; `""` the last one. */
  resume?: string;
  /** `--sessions`: list the stored sessions and exit. */
  sessions: boolean;
  /** `--mcp-config FILE`: MCP servers in Claude Code's `mcpServers` format (beside `.mcp.json`). */
  mcpConfig?: string;
}

/** SPEC R67: the CLI's abort grace (docs/guides/cli.md says why 5 s). */
export const DEFAULT_ABORT_GRACE_MS = 5000;

export type ParsedArgs =
  | { kind: "run"; options: CliOptions }
  | { kind: "help" }
  | { kind: "version" }
  | { kind: "error"; message: string };

export function parseCliArgs(argv: readonly string[]): ParsedArgs {
  // Words after `--` are the prompt's, whatever they look like: only the options before it are read.
  const end = argv.indexOf("--");
  const flags = end === -1 ? argv : argv.slice(0, end);
  const words = end === -1 ? [] : argv.slice(end);
  // `--inspect` takes an optional value (`--inspect=stately`); parseArgs has no optional values.
  const inspectValue = flags.find((arg) => arg.startsWith("--inspect="))?.slice("--inspect=".length);
  if (inspectValue !== undefined && inspectValue !== "live" && inspectValue !== "stately") {
    return { kind: "error", message: `Unknown inspector "${inspectValue}" (--inspect, --inspect=live or --inspect=stately).` };
  }
  argv = [...flags.map((arg) => (arg.startsWith("--inspect=") ? "--inspect" : arg)), ...words];
  let parsed;
  try {
    parsed = parseArgs({
      args: withOptionalValues(argv),
      allowPositionals: true,
      strict: true,
      tokens: true,
      options: {
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" },
        offline: { type: "boolean" },
        model: { type: "string", short: "m" },
        "base-url": { type: "string" },
        thinking: { type: "string" },
        yes: { type: "boolean", short: "y" },
        trace: { type: "string" },
        inspect: { type: "boolean" },
        otel: { type: "boolean" },
        cwd: { type: "string", short: "C" },
        "max-turns": { type: "string" },
        "max-cost": { type: "string" },
        "no-retry": { type: "boolean" },
        "max-attempts": { type: "string" },
        "no-output-recovery": { type: "boolean" },
        "abort-grace-ms": { type: "string" },
        "no-abort-grace": { type: "boolean" },
        "no-compact": { type: "boolean" },
        "compact-at": { type: "string" },
        "no-streaming-tools": { type: "boolean" },
        "no-save": { type: "boolean" },
        resume: { type: "string" },
        sessions: { type: "boolean" },
        "mcp-config": { type: "string" },
      },
    });
  } catch (error) {
    return { kind: "error", message: describeParseError(error, argv) };
  }
  const { values, positionals, tokens } = parsed;
  /** The option as the user typed it (`-m` or `--model`). */
  const typed = (name: string) => {
    for (const token of [...tokens].reverse()) if (token.kind === "option" && token.name === name) return token.rawName;
    return `--${name}`;
  };
  if (values.help) return { kind: "help" };
  if (values.version) return { kind: "version" };
  for (const name of ["model", "trace", "cwd", "thinking", "mcp-config", "base-url"] as const) {
    const value = values[name];
    if (value !== undefined && (value === "" || value.startsWith("-"))) return { kind: "error", message: `Option ${typed(name)} needs a value.` };
  }
  const thinking = (values.thinking ?? "off") as ThinkingLevel;
  if (!THINKING_LEVELS.includes(thinking)) {
    return { kind: "error", message: `Unknown thinking level "${values.thinking}" (one of: ${THINKING_LEVELS.join(", ")}).` };
  }
  // R63, R60, R67, R62: limits are numbers; turns, attempts, milliseconds and tokens whole ones.
  const number = (name: "max-turns" | "max-cost" | "max-attempts" | "abort-grace-ms" | "compact-at", kind: "positive" | "whole" | "count"): number | string | undefined => {
    const raw = values[name];
    if (raw === undefined) return undefined;
    const value = Number(raw);
    const valid = raw.trim() !== "" && Number.isFinite(value) && (kind === "count" ? Number.isInteger(value) && value >= 0 : value > 0 && (kind === "positive" || Number.isInteger(value)));
    const wanted = kind === "positive" ? "a positive number" : kind === "whole" ? "a positive whole number" : "a whole number of milliseconds (0 or more)";
    return valid ? value : `Option ${typed(name)} needs ${wanted} (got "${raw}").`;
  };
  const maxTurns = number("max-turns", "whole");
  const maxCostUsd = number("max-cost", "positive");
  const maxAttempts = number("max-attempts", "whole");
  const abortGraceMs = number("abort-grace-ms", "count");
  const compactAtTokens = number("compact-at", "whole");
  for (const value of [maxTurns, maxCostUsd, maxAttempts, abortGraceMs, compactAtTokens]) if (typeof value === "string") return { kind: "error", message: value };
  for (const [off, tuning] of [["no-retry", "max-attempts"], ["no-abort-grace", "abort-grace-ms"], ["no-compact", "compact-at"]] as const) {
    if (values[off] && values[tuning] !== undefined) return { kind: "error", message: `Options --${off} and ${typed(tuning)} contradict each other; give one.` };
  }
  if (values["no-save"] && values.resume !== undefined) return { kind: "error", message: "Options --no-save and --resume contradict each other; give one." };
  const prompt = positionals.join(" ").trim();
  return {
    kind: "run",
    options: {
      ...(prompt ? { prompt } : {}),
      offline: values.offline === true,
      ...(values.model !== undefined ? { model: values.model } : {}),
      ...(values["base-url"] !== undefined ? { baseUrl: values["base-url"] } : {}),
      thinking,
      yes: values.yes === true,
      ...(values.trace !== undefined ? { trace: values.trace } : {}),
      inspect: values.inspect === true,
      ...(inspectValue === "stately" ? { inspectWith: "stately" as const } : {}),
      otel: values.otel === true,
      ...(values.cwd !== undefined ? { cwd: values.cwd } : {}),
      ...(typeof maxTurns === "number" ? { maxTurns } : {}),
      ...(typeof maxCostUsd === "number" ? { maxCostUsd } : {}),
      retry: values["no-retry"] !== true,
      ...(typeof maxAttempts === "number" ? { maxAttempts } : {}),
      outputLimitRecovery: values["no-output-recovery"] !== true,
      ...(values["no-abort-grace"] ? {} : { abortGraceMs: typeof abortGraceMs === "number" ? abortGraceMs : DEFAULT_ABORT_GRACE_MS }),
      compact: values["no-compact"] !== true,
      ...(typeof compactAtTokens === "number" ? { compactAtTokens } : {}),
      streamingTools: values["no-streaming-tools"] !== true,
      save: values["no-save"] !== true,
      ...(values.resume !== undefined ? { resume: values.resume === "last" ? "" : values.resume } : {}),
      sessions: values.sessions === true,
      ...(values["mcp-config"] !== undefined ? { mcpConfig: values["mcp-config"] } : {}),
    },
  };
}

/** The options whose value is a number: a negative one is that value, not an option. */
const NUMERIC_OPTIONS = new Set(["--max-turns", "--max-cost", "--max-attempts", "--abort-grace-ms", "--compact-at"]);

/**
 * Values `parseArgs` has no notion of. `--resume` takes an optional id: the next word is the id
 * unless it is an option (so `--resume "a prompt"` is an id, and fails as unknown; `--resume last
 * "a prompt"` continues the last session with a prompt). `--resume=ID` works too. A number option
 * followed by a negative number (`--abort-grace-ms -5`) gets it as its value, so the error names
 * the value rather than saying none was given.
 */
function withOptionalValues(argv: readonly string[]): string[] {
  const args: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === "--") {
      args.push(...argv.slice(index));
      break;
    }
    const next = argv[index + 1];
    if (NUMERIC_OPTIONS.has(arg) && next !== undefined && /^-[\d.]/.test(next)) {
      args.push(`${arg}=${next}`);
      index++;
      continue;
    }
    if (arg !== "--resume") {
      args.push(arg);
      continue;
    }
    if (next !== undefined && !next.startsWith("-")) {
      args.push(`--resume=${next}`);
      index++;
    } else args.push("--resume=");
  }
  return args;
}

function describeParseError(error: unknown, argv: readonly string[]): string {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const option = /'([^']+)'/.exec(message)?.[1];
    return `Unknown option ${option ?? message}.`;
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    const option = /'([^']+)'/.exec(message)?.[1];
    if (!option) return message;
    // A flag given a value (`--no-retry=yes`) is reported with the same code.
    if (message.includes("does not take an argument")) return `Option ${option} takes no value.`;
    // "-m, --model <value>": name the spelling that was typed (a missing value means it came last).
    const names = option.replace(/ <value>$/, "").split(", ");
    const last = argv.at(-1)?.split("=")[0];
    return `Option ${names.find((name) => name === last) ?? names.at(-1)} needs a value.`;
  }
  return message;
}

export const USAGE = `Usage: npm start -- [options] [prompt…]      (installed: xstate-agent [options] [prompt…])

A terminal agent over the XState agent loop. It works on the current directory with four tools:
list_files, read_file, search_text and write_file (write_file asks before writing).

With a prompt it runs once and exits; without one (on a terminal) it starts a prompt loop.

Options:
  --offline            Use the built-in offline demo model (the default without ANTHROPIC_API_KEY)
  -m, --model <id>     The model: a bare id is Claude's (with ANTHROPIC_API_KEY; default:
                       ${DEFAULT_MODEL}); provider:id picks another provider: openai:gpt-5
                       (OPENAI_API_KEY), openai-chat:<id> (Chat Completions), ollama:llama3.2,
                       google:gemini-2.5-flash (GOOGLE_GENERATIVE_AI_API_KEY), anthropic:<id>.
                       openai/google need their package: npm install @ai-sdk/openai / @ai-sdk/google
      --base-url <url> The provider's endpoint: an OpenAI-compatible server, Ollama, a proxy
                       (default: OPENAI_BASE_URL, GOOGLE_GENERATIVE_AI_BASE_URL, ANTHROPIC_BASE_URL)
      --thinking <lvl> Thinking level: ${THINKING_LEVELS.join(", ")} (default: off)
  -y, --yes            Approve write_file and MCP tool calls, and the project's MCP servers, up
                       front (without it each asks; without a terminal to ask, they are refused)
      --trace <file>   Write a JSON Lines trace of the session (src/trace/FORMAT.md)
      --inspect        Watch the session live on a local page (loopback, offline; its URL is printed;
                       --inspect=live says the same)
      --inspect=stately  Stream it to the Stately inspector's relay on ws://localhost:8080 instead
                       (started, with its page opened, when none is running)
      --otel           Export OpenTelemetry spans and metrics by OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT
                       (default http://localhost:4318; the standard OTEL_* variables apply)
  -C, --cwd <dir>      Work on this directory instead of the current one
      --max-turns <n>  End a run after n turns (its footer says so)
      --max-cost <usd> End a run once it has cost this many US dollars
      --no-streaming-tools
                       Run tools only once the model's answer is complete (default: a read
                       starts as soon as its call is complete, while the model goes on)
      --mcp-config <file>
                       MCP servers ({"mcpServers": {...}}, as Claude Code writes them) whose tools
                       the agent may use, besides the project's .mcp.json (asked about once)
  -h, --help           Show this help
  -v, --version        Show the version

Sessions (kept in $XDG_STATE_HOME/xstate-agent/<hash of the directory>/, default ~/.local/state):
      --no-save        Keep nothing: the session lives in memory only
      --resume [id]    Continue the last session of this directory, or the one with this id, even one
                       that was killed mid-run (its transcript is shown again; a write that waited
                       is asked again). \`--resume last "prompt"\` continues the last one with a prompt
      --sessions       List this directory's sessions (id, last update, messages, first prompt)

Recovery (on by default):
      --no-retry       Do not retry overloads, rate limits, 5xx, dropped connections and stalls
                       (the Anthropic SDK's own retries apply instead, unseen)
      --max-attempts <n>
                       Attempts per model request, the first included (default: 5)
      --no-output-recovery
                       Keep an answer cut off by the output limit as it is (default: ask again
                       with a higher limit, then up to 3 times ask the model to continue)
      --abort-grace-ms <ms>
                       How long an abort waits for a tool or hook that ignores it (default: ${DEFAULT_ABORT_GRACE_MS})
      --no-abort-grace Wait for them however long they take
      --no-compact     Keep the conversation as it is when it outgrows the model's context window
                       (default: summarize the older turns with the model and ask again)
      --compact-at <tokens>
                       Also summarize older turns before a request once the conversation is
                       estimated above this many tokens (off by default: it spends model calls)

Keys, while the agent works:
  Enter                Send the typed line as a steering message (delivered after the current step)
  >> text, Alt+Enter   Queue a follow-up (delivered when the agent would otherwise stop)
  Esc, Ctrl-C          Abort the run; the session continues (Ctrl-C twice quickly exits)
  y / n / a            Answer a write_file question: yes, no, always for this path (Enter or Esc
                       refuses; /exit leaves it waiting, and --resume asks again)
At the prompt (interactive):
  Enter                Send the prompt (a pasted text keeps its line breaks)
  /mcp                 List the MCP servers and their tools
  /help                List the commands and keys (commands never go to the model; //text sends /text)
  Ctrl-C, Ctrl-C       Exit (also /exit or Ctrl-D on an empty line); one Ctrl-C after an abort exits

Examples:
  npm start -- --offline "summarize this repository"
  npm start -- --trace run.jsonl "find the TODOs and summarize them"
  npm start                                   # interactive
`;
