/**
 * The offline demo model: a scripted model (no network, no key) that works like a small agent over
 * the working directory. It decides each response from the transcript — the task, the tool results
 * so far, a steering message — so its answers quote what the tools really found. One task:
 *
 * 1. explore: list_files + read_file + search_text in one turn (a parallel batch);
 * 2. a steering message, if one arrived: acknowledge it and act on it;
 * 3. save notes with write_file (the CLI's permission policy may block it);
 * 4. answer from the facts gathered.
 *
 * A later task (a follow-up, or the next prompt) digs into the file with the most matches. A
 * compaction's summary request (R62: `--compact-at`, or an overflow) gets a plain-text summary.
 */
import type { Message, Model, ScriptedBlock, ScriptedCall, ScriptedResponse, ToolResultMessage } from "../../index.js";
import { scriptedModel, scriptedStreamFn, text, thinking, toolCall, type ScriptedStreamFn } from "../../index.js";
import { DEFAULT_SUMMARY_INSTRUCTIONS } from "../../recovery/index.js";
import type { ListFilesDetails, ReadFileDetails, SearchTextDetails } from "../tools/index.js";
import { plural } from "./format.js";
import { mcpDemoTurn } from "./offline-demo-mcp.js";

export const OFFLINE_NOTES_FILE = "agent-notes.md";

export const offlineDemoModel: Model = {
  ...scriptedModel,
  id: "offline-demo",
  name: "offline demo model",
  provider: "offline",
  api: "scripted",
};

export interface OfflineDemoOptions {
  /** Delay before each streamed event, in ms (default 8). */
  delayMs?: number;
}

/** The steering message and follow-up the CLI injects when the demo runs without a terminal. */
export const DEMO_STEERING = "Also count the test files.";
export const DEMO_FOLLOW_UP = "Which file has the most matches? Show me the first one.";

export function offlineDemoStreamFn(options: OfflineDemoOptions = {}): ScriptedStreamFn {
  const delayMs = options.delayMs ?? 8;
  return scriptedStreamFn((call) => {
    const response = isSummaryRequest(call.context.messages)
      ? summaryTurn(call.context.messages)
      : (mcpDemoTurn(call.context.messages) ?? respond(call.context.messages.filter((message) => message.role !== "system")));
    return { delayMs, ...response, usage: estimateUsage(call, response) };
  });
}

// ---------------------------------------------------------------------------------------------

type Turn = Pick<ScriptedResponse, "content">;

/** What the transcript says about the current task. */
interface Task {
  prompt: string;
  /** Messages after the task's prompt. */
  since: Message[];
  /** An earlier task was answered (this is a follow-up or a later prompt). */
  isLater: boolean;
  /** The message before this request, if it is an unanswered steering message. */
  steering?: string;
  /** Steering messages of this task, in order. */
  steered: string[];
  /** Every tool result of the session, oldest first. */
  allResults: ToolResultMessage[];
}

export function respond(messages: Message[]): Turn {
  const task = currentTask(messages);
  if (task.steering !== undefined) return steeringTurn(task.steering);
  const answered = task.since.some((message) => message.role === "assistant");
  // A later request digs deeper, unless it asks for an overview again.
  if (task.isLater && !/summar|overview|repositor|explore/i.test(task.prompt)) return answered ? followUpAnswer(task) : followUpTurn(task);
  if (!answered) return exploreTurn(task.prompt);
  if (!task.since.some((message) => message.role === "toolResult" && message.toolName === "write_file")) return writeTurn(task);
  return finalAnswer(task);
}

/** R62: the built-in compactor's request: its instructions as the system message, the conversation as text. */
function isSummaryRequest(messages: Message[]): boolean {
  return messages.some((message) => message.role === "system" && message.content === DEFAULT_SUMMARY_INSTRUCTIONS);
}

/**
 * What the demo "remembers" of a conversation it is asked to summarize: the earlier summary, the
 * user's requests and the tools used, read from the request's text (`[user]`, `[tool call NAME …]`
 * headers), so a compacted session can still say what happened.
 */
export function summaryTurn(messages: Message[]): Turn {
  const request = messages.map(userText).join("\n");
  const previous = /<summary>\n([\s\S]*?)\n<\/summary>/.exec(request)?.[1];
  const conversation = /<conversation>\n([\s\S]*)\n<\/conversation>/.exec(request)?.[1] ?? "";
  const asked = [...conversation.matchAll(/^\[user\]\n(.+)$/gm)].map((match) => `"${quote(match[1])}"`);
  const tools = new Map<string, number>();
  for (const match of conversation.matchAll(/^\[tool call (\S+) id=/gm)) tools.set(match[1], (tools.get(match[1]) ?? 0) + 1);
  const used = [...tools].map(([name, count]) => (count > 1 ? `${name} ×${count}` : name));
  const lines = [
    ...(previous ? [previous] : []),
    ...(asked.length ? [`The user asked: ${asked.join("; ")}.`] : []),
    used.length ? `The assistant used ${plural([...tools.values()].reduce((a, b) => a + b, 0), "tool call")} (${used.join(", ")}) and answered from their results.` : "The assistant answered without tools.",
  ];
  return { content: [text(lines.join("\n"))] };
}

function currentTask(messages: Message[]): Task {
  let start = -1;
  const steeredAt: number[] = [];
  for (let index = 0; index < messages.length; index++) {
    if (messages[index].role !== "user") continue;
    // A user message right after tool results arrived mid-run: steering. Otherwise a new task.
    const before = messages[index - 1];
    if (before?.role === "toolResult") steeredAt.push(index);
    else start = index;
  }
  const since = messages.slice(start + 1);
  const last = messages[messages.length - 1];
  const steeredInTask = steeredAt.filter((index) => index > start);
  return {
    prompt: start >= 0 ? userText(messages[start]) : "",
    since,
    isLater: messages.slice(0, Math.max(0, start)).some((message) => message.role === "assistant"),
    steering: last?.role === "user" && steeredInTask.includes(messages.length - 1) ? userText(last) : undefined,
    steered: steeredInTask.map((index) => userText(messages[index])),
    allResults: messages.filter((message): message is ToolResultMessage => message.role === "toolResult"),
  };
}

function exploreTurn(prompt: string): Turn {
  const file = /[\w./-]+\.(md|json|ts|js|txt|toml|yaml|yml)\b/.exec(prompt)?.[0] ?? "package.json";
  const quoted = /["“']([^"”']{2,40})["”']/.exec(prompt)?.[1];
  const pattern = quoted ?? "TODO|FIXME";
  return {
    content: [
      thinking(
        `The user asked: "${quote(prompt)}". I'll get the layout with list_files, read ${file} for the project's metadata, ` +
          `and search for ${quoted ? `"${quoted}"` : "TODO and FIXME markers"} — three independent calls, so one batch.`,
      ),
      text(`Let me look around first: the file tree, \`${file}\` and ${quoted ? `"${quoted}"` : "the TODOs"}, all at once.`),
      toolCall("list_files", { path: ".", recursive: true, limit: 5000 }),
      toolCall("read_file", { path: file }),
      toolCall("search_text", quoted ? { pattern: quoted, literal: true, ignoreCase: true } : { pattern, maxResults: 200 }),
    ],
  };
}

function steeringTurn(steering: string): Turn {
  const call: ScriptedBlock = /\btests?\b/i.test(steering)
    ? toolCall("list_files", { path: ".", recursive: true, glob: "*.{test,spec}.*", limit: 5000 })
    : toolCall("search_text", { pattern: keywordOf(steering), literal: true, ignoreCase: true, maxResults: 100 });
  return { content: [text(`Steering received: "${quote(steering)}" — on it.`), call] };
}

function writeTurn(task: Task): Turn {
  return {
    content: [
      text(`I'll save these notes to \`${OFFLINE_NOTES_FILE}\` so they outlive this session.`),
      toolCall("write_file", { path: OFFLINE_NOTES_FILE, content: `# Notes\n\n${facts(task).map((fact) => `- ${stripMarkdown(fact)}`).join("\n")}\n` }),
    ],
  };
}

function finalAnswer(task: Task): Turn {
  const lines = facts(task).map((fact) => `- ${fact}`);
  const write = latest(task.since, "write_file");
  if (write) {
    lines.push(
      write.isError
        ? `- I could not save the notes: ${firstLine(resultText(write))}`
        : `- The notes are saved in \`${OFFLINE_NOTES_FILE}\`.`,
    );
  }
  const project = projectName(task.allResults);
  return { content: [text(`Here is what I found${project ? ` in **${project}**` : ""}:\n${lines.join("\n")}`)] };
}

function followUpTurn(task: Task): Turn {
  const search = [...task.allResults].reverse().find((result) => result.toolName === "search_text" && !result.isError);
  const matches = (search?.details as SearchTextDetails | undefined)?.matches ?? [];
  if (matches.length > 0 && /\b(match|matches|todos?|fixmes?|most|first|closer|show)\b/i.test(task.prompt)) {
    const [file, count] = topFile(matches);
    const first = matches.find((match) => match.path === file)!;
    return {
      content: [
        text(`Looking closer at \`${file}\`, which has ${count} of the ${plural(matches.length, "match", "matches")}.`),
        toolCall("read_file", { path: file, startLine: Math.max(1, first.line - 2), endLine: first.line + 3 }),
      ],
    };
  }
  return { content: [text(`Searching for "${keywordOf(task.prompt)}".`), toolCall("search_text", { pattern: keywordOf(task.prompt), literal: true, ignoreCase: true })] };
}

function followUpAnswer(task: Task): Turn {
  const read = latest(task.since, "read_file");
  const search = latest(task.since, "search_text");
  if (read && !read.isError) {
    const details = detailsOf<ReadFileDetails>(read);
    const body = resultText(read).split("\n").slice(1).join("\n");
    return {
      content: [text(`\`${details.path}\` (lines ${details.startLine}-${details.endLine} of ${details.totalLines}):\n${body}\nThat is the first match in the file with the most of them.`)],
    };
  }
  if (search && !search.isError) {
    const details = detailsOf<SearchTextDetails>(search);
    const sample = details.matches.slice(0, 3).map((match) => `\`${match.path}:${match.line}\``).join(", ");
    return { content: [text(`"${details.pattern}" appears on ${plural(details.matches.length, "line")} in ${plural(details.files, "file")}${sample ? `, e.g. ${sample}` : ""}.`)] };
  }
  const failed = read ?? search;
  return { content: [text(failed ? `That did not work: ${firstLine(resultText(failed))}` : "I have nothing more to add.")] };
}

// -- facts from tool results --------------------------------------------------------------------

function facts(task: Task): string[] {
  const out: string[] = [];
  const list = task.since.find((message): message is ToolResultMessage => message.role === "toolResult" && message.toolName === "list_files");
  if (list && !list.isError) {
    const details = detailsOf<ListFilesDetails>(list);
    const top = details.entries.filter((entry) => !entry.slice(0, -1).includes("/")).slice(0, 6);
    out.push(
      `The tree has ${plural(details.files, "file")} in ${plural(details.directories, "directory", "directories")} (node_modules and .git not counted)` +
        (top.length ? `; at the top: ${top.map((entry) => `\`${entry}\``).join(", ")}.` : "."),
    );
  }
  const read = task.since.find((message): message is ToolResultMessage => message.role === "toolResult" && message.toolName === "read_file");
  if (read) out.push(readFact(read));
  const search = task.since.find((message): message is ToolResultMessage => message.role === "toolResult" && message.toolName === "search_text");
  if (search) out.push(searchFact(search));
  const steered = task.steered;
  if (steered.length > 0) {
    const after = task.since.slice(task.since.findIndex((message) => message.role === "user"));
    const result = after.find((message): message is ToolResultMessage => message.role === "toolResult");
    out.push(`You asked: "${quote(steered[0])}" — ${result ? steeringFact(result) : "noted."}`);
  }
  return out;
}

function readFact(read: ToolResultMessage): string {
  const details = read.details as ReadFileDetails | undefined;
  if (read.isError || !details) return `I could not read the file: ${firstLine(resultText(read))}`;
  if (details.path.endsWith("package.json")) {
    try {
      const body = resultText(read).split("\n").slice(1).map((line) => line.replace(/^\s*\d+│ ?/, "")).join("\n");
      const pkg = JSON.parse(body) as { name?: string; version?: string; description?: string; scripts?: object; dependencies?: object; devDependencies?: object };
      const scripts = Object.keys(pkg.scripts ?? {});
      const deps = Object.keys(pkg.dependencies ?? {}).length + Object.keys(pkg.devDependencies ?? {}).length;
      return (
        `\`package.json\`: ${pkg.name ?? "unnamed"}${pkg.version ? ` ${pkg.version}` : ""}` +
        (pkg.description ? ` — "${pkg.description}"` : "") +
        `; ${deps} dependencies` +
        (scripts.length ? `, scripts ${scripts.slice(0, 5).map((name) => `\`${name}\``).join(", ")}${scripts.length > 5 ? ` and ${scripts.length - 5} more` : ""}.` : ".")
      );
    } catch {
      // Not JSON: described like any file below.
    }
  }
  const heading = resultText(read).split("\n").slice(1).map((line) => line.replace(/^\s*\d+│ ?/, "")).find((line) => line.trim() !== "");
  return `\`${details.path}\` has ${plural(details.totalLines, "line")}${heading ? `, starting with "${heading.trim().slice(0, 60)}"` : ""}.`;
}

function searchFact(search: ToolResultMessage): string {
  const details = search.details as SearchTextDetails | undefined;
  if (search.isError || !details) return `The search failed: ${firstLine(resultText(search))}`;
  if (details.matches.length === 0) return `No match for \`${details.pattern}\` in ${plural(details.filesSearched, "file")}.`;
  const ranked = rank(details.matches).slice(0, 3).map(([file, count]) => `\`${file}\` (${count})`);
  return (
    `\`${details.pattern}\` matches ${plural(details.matches.length, "line")}${details.truncated ? " or more" : ""} in ${details.files} of ${plural(details.filesSearched, "file")}; ` +
    `most in ${ranked.join(", ")}.`
  );
}

function steeringFact(result: ToolResultMessage): string {
  if (result.isError) return `that failed: ${firstLine(resultText(result))}`;
  if (result.toolName === "list_files") {
    const details = detailsOf<ListFilesDetails>(result);
    const sample = details.entries.filter((entry) => !entry.endsWith("/")).slice(0, 3).map((entry) => `\`${entry}\``);
    return `there ${details.files === 1 ? "is" : "are"} ${plural(details.files, "test file")}${sample.length ? `, e.g. ${sample.join(", ")}` : ""}.`;
  }
  const details = detailsOf<SearchTextDetails>(result);
  return `"${details.pattern}" appears on ${plural(details.matches.length, "line")} in ${plural(details.files, "file")}.`;
}

function projectName(results: ToolResultMessage[]): string | undefined {
  for (const result of results) {
    if (result.toolName !== "read_file" || result.isError) continue;
    const name = /"name":\s*"([^"]+)"/.exec(resultText(result))?.[1];
    if (name) return name;
  }
  return undefined;
}

// -- helpers ------------------------------------------------------------------------------------

/** A result's details as its tool (`../tools`) returned them: JSON in the transcript, typed by the tool's interface. */
function detailsOf<T>(result: ToolResultMessage): T {
  return result.details as unknown as T;
}

function latest(messages: Message[], toolName: string): ToolResultMessage | undefined {
  return [...messages].reverse().find((message): message is ToolResultMessage => message.role === "toolResult" && message.toolName === toolName);
}

function rank(matches: SearchTextDetails["matches"]): [string, number][] {
  const counts = new Map<string, number>();
  for (const match of matches) counts.set(match.path, (counts.get(match.path) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}

const topFile = (matches: SearchTextDetails["matches"]): [string, number] => rank(matches)[0];

function userText(message: Message): string {
  if (message.role !== "user") return "";
  return typeof message.content === "string" ? message.content : message.content.map((block) => (block.type === "text" ? block.text : "")).join(" ");
}

function resultText(result: ToolResultMessage): string {
  return result.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");
}

const firstLine = (value: string) => value.split("\n").find((line) => line.trim() !== "")?.trim() ?? "";

const STOP_WORDS = new Set(["the", "and", "for", "with", "that", "this", "what", "which", "also", "about", "show", "tell", "find", "please", "look", "from", "into", "file", "files"]);

/** The most telling word of a request (the longest that is not a stop word). */
export function keywordOf(request: string): string {
  const words = request.toLowerCase().match(/[a-z0-9_-]{3,}/g) ?? [];
  const useful = words.filter((word) => !STOP_WORDS.has(word));
  const longest = (useful.length ? useful : words).sort((a, b) => b.length - a.length)[0] ?? "TODO";
  return longest.slice(0, 40);
}

/**
 * User text as the demo quotes it back: short, so a pasted 100 KB prompt does not stream back
 * 100 KB at the demo's pace (the whole text is still in the transcript).
 */
const QUOTE_LIMIT = 120;
export function quote(value: string): string {
  const flat = value.replace(/\s+/g, " ").trim();
  return flat.length <= QUOTE_LIMIT ? flat : `${flat.slice(0, QUOTE_LIMIT)}… (${flat.length.toLocaleString("en-US")} characters)`;
}

const stripMarkdown = (value: string) => value.replace(/\*\*|`/g, "");

function estimateUsage(call: ScriptedCall, response: Turn): ScriptedResponse["usage"] {
  const input = Math.ceil(JSON.stringify(call.context.messages).length / 4);
  const output = Math.ceil(JSON.stringify(response.content ?? []).length / 4);
  return { input, output };
}
