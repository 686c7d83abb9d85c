/**
 * Writes test/visual/fixtures/sample-trace.jsonl: a real run (runAgentLoop with the scripted
 * model) recorded in the trace format v1 (src/trace/FORMAT.md) by the library's own trace
 * recorder (src/trace): agent events plus the run and tool-call actors' states from XState
 * inspection. Turn 1 calls two tools that run in parallel with different delays; turn 2 answers.
 *
 *   tsx scripts/make-sample-trace.ts [OUT]
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { runAgentLoop, scriptedModel, scriptedStreamFn, text, toolCall } from "../src/index.js";
import type { AgentTool, AgentToolResult, Message } from "../src/index.js";
import { createTraceRecorder } from "../src/trace/index.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const SAMPLE_TRACE = join(ROOT, "test/visual/fixtures/sample-trace.jsonl");

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((done) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", () => (clearTimeout(timer), done()), { once: true });
  });

const result = (text: string, details: unknown): AgentToolResult => ({ content: [{ type: "text", text }], details });

/** Two tools with different latencies, so their executions overlap but end apart. */
export function sampleTools(delays = { read: 120, search: 200 }): AgentTool[] {
  return [
    {
      name: "read_file",
      label: "Read file",
      description: "Reads a text file from the workspace.",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      async execute(_id, params: { path: string }, signal, onUpdate) {
        await sleep(delays.read / 2, signal);
        onUpdate?.(result(`reading ${params.path}…`, { bytesRead: 512 }));
        await sleep(delays.read / 2, signal);
        return result("# Notes\nThe agent loop is a statechart: turns, requests and tool calls.", { path: params.path, bytes: 1024 });
      },
    },
    {
      name: "search",
      label: "Search",
      description: "Searches the workspace for a phrase.",
      parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
      async execute(_id, params: { query: string }, signal) {
        await sleep(delays.search, signal);
        return result(`3 matches for "${params.query}"`, {
          matches: [
            { file: "machines/run.machine.ts", line: 1 },
            { file: "machines/tool-call.machine.ts", line: 1 },
            { file: "README.md", line: 3 },
          ],
        });
      },
    },
  ];
}

/** The scripted conversation: two parallel tool calls, then an answer. */
export function sampleStream() {
  return scriptedStreamFn([
    {
      content: [
        text("I'll read the notes and search the code at the same time."),
        toolCall("read_file", { path: "NOTES.md" }, "toolu_01"),
        toolCall("search", { query: "agent loop" }, "toolu_02"),
      ],
      delayMs: 3,
      usage: { input: 420, output: 64 },
    },
    {
      content: [text("The notes describe the loop as a statechart, and the search found 3 places that define it.")],
      delayMs: 3,
      usage: { input: 610, output: 31 },
    },
  ]);
}

export async function makeSampleTrace(): Promise<string> {
  const lines: string[] = [];
  const recorder = createTraceRecorder({
    write: (line) => void lines.push(line),
    model: { id: scriptedModel.id, provider: scriptedModel.provider },
    cwd: ".",
  });
  recorder.note("sample trace: scripted model, two tools in parallel (scripts/make-sample-trace.ts)");
  await runAgentLoop(
    [{ role: "user", content: "What do the notes say, and where is the agent loop defined?", timestamp: Date.now() }],
    { messages: [], tools: sampleTools() },
    { model: scriptedModel, convertToLlm: (messages) => messages as Message[] },
    (event) => recorder.recordEvent(event),
    undefined,
    sampleStream(),
    { inspect: recorder.inspect },
  );
  return lines.join("");
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const out = resolve(process.argv[2] ?? SAMPLE_TRACE);
  const trace = await makeSampleTrace();
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, trace);
  console.log(`wrote ${out} (${trace.split("\n").length - 1} records)`);
}
