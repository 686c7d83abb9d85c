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
  /** Claude model id; absent means DEFAULT_MODEL. */
  model?: string;
  thinking: ThinkingLevel;
  /** Allow write_file without asking. */
  yes: boolean;
  trace?: string;
  inspect: boolean;
  /** Working directory the tools are confined to. */
  cwd?: string;
  /** SPEC R63: each run's limits. */
  maxTurns?: number;
  maxCostUsd?: number;
}

export type ParsedArgs =
  | { kind: "run"; options: CliOptions }
  | { kind: "help" }
  | { kind: "version" }
  | { kind: "error"; message: string };

export function parseCliArgs(argv: readonly string[]): ParsedArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      tokens: true,
      options: {
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" },
        offline: { type: "boolean" },
        model: { type: "string", short: "m" },
        thinking: { type: "string" },
        yes: { type: "boolean", short: "y" },
        trace: { type: "string" },
        inspect: { type: "boolean" },
        cwd: { type: "string", short: "C" },
        "max-turns": { type: "string" },
        "max-cost": { type: "string" },
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
  for (const name of ["model", "trace", "cwd", "thinking"] as const) {
    const value = values[name];
    if (value !== undefined && (value === "" || value.startsWith("-"))) return { kind: "error", message: `Option ${typed(name)} needs a value.` };
  }
  const thinking = (values.thinking ?? "off") as ThinkingLevel;
  if (!THINKING_LEVELS.includes(thinking)) {
    return { kind: "error", message: `Unknown thinking level "${values.thinking}" (one of: ${THINKING_LEVELS.join(", ")}).` };
  }
  // R63: budgets are positive numbers (turns a whole number).
  const limit = (name: "max-turns" | "max-cost", whole: boolean): number | string | undefined => {
    const raw = values[name];
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (raw === "" || !Number.isFinite(value) || value <= 0 || (whole && !Number.isInteger(value))) {
      return `Option ${typed(name)} needs a positive ${whole ? "whole number" : "number"} (got "${raw}").`;
    }
    return value;
  };
  const maxTurns = limit("max-turns", true);
  const maxCostUsd = limit("max-cost", false);
  for (const value of [maxTurns, maxCostUsd]) if (typeof value === "string") return { kind: "error", message: value };
  const prompt = positionals.join(" ").trim();
  return {
    kind: "run",
    options: {
      ...(prompt ? { prompt } : {}),
      offline: values.offline === true,
      ...(values.model !== undefined ? { model: values.model } : {}),
      thinking,
      yes: values.yes === true,
      ...(values.trace !== undefined ? { trace: values.trace } : {}),
      inspect: values.inspect === true,
      ...(values.cwd !== undefined ? { cwd: values.cwd } : {}),
      ...(typeof maxTurns === "number" ? { maxTurns } : {}),
      ...(typeof maxCostUsd === "number" ? { maxCostUsd } : {}),
    },
  };
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
  -m, --model <id>     Claude model when ANTHROPIC_API_KEY is set (default: ${DEFAULT_MODEL})
      --thinking <lvl> Thinking level: ${THINKING_LEVELS.join(", ")} (default: off)
  -y, --yes            Allow write_file without asking (without a terminal, writes are denied)
      --trace <file>   Write a JSON Lines trace of the session (src/trace/FORMAT.md)
      --inspect        Stream the session to the Stately inspector's relay on ws://localhost:8080
                       (started, with its page opened, when none is running)
  -C, --cwd <dir>      Work on this directory instead of the current one
      --max-turns <n>  End a run after n turns (its footer says so)
      --max-cost <usd> End a run once it has cost this many US dollars
  -h, --help           Show this help
  -v, --version        Show the version

Keys, while the agent works:
  Enter                Send the typed line as a steering message (delivered after the current step)
  >> text, Alt+Enter   Queue a follow-up (delivered when the agent would otherwise stop)
  Esc, Ctrl-C          Abort the run; the session continues (Ctrl-C twice quickly exits)
  y / n                Answer a write_file question (Enter or Esc refuses)
At the prompt (interactive):
  Enter                Send the prompt (a pasted text keeps its line breaks)
  /help                List the commands and keys (commands never go to the model; //text sends /text)
  Ctrl-C, Ctrl-C       Exit (also /exit or Ctrl-D on an empty line); one Ctrl-C after an abort exits

Examples:
  npm start -- --offline "summarize this repository"
  npm start -- --trace run.jsonl "find the TODOs and summarize them"
  npm start                                   # interactive
`;
