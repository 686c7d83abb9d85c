/**
 * The fourth restore scenario (SPEC R13 inside R70): streaming mode. The first response streams
 * slowly (1 ms per event, real timers) while its calls run: two replay-safe reads (concurrency-
 * safe) and a write that is neither concurrency-safe nor replay-safe; reads take a few ms, so
 * snapshots catch calls checking, waiting, preflighting and executing while the response streams.
 * The write outlasts the stream by construction (it waits for the first response to end), so the
 * run always rests in `response.ended` with a call still running, however late timers fire on a
 * loaded machine; a restored run that streams nothing again gets a bounded fallback.
 */
import type { AgentLoopConfig, AgentTool, AgentToolResult, ScriptedResponse } from "../../src/index.js";
import { defaultConvertToLlm, scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/index.js";
import type { AgentRunOptions } from "../../src/actors/run-runtime.js";
import { fixedClock, type World } from "./scenario.js";

const ok = (value: string): AgentToolResult => ({ content: [{ type: "text", text: value }], details: { value } });
const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const responses: ScriptedResponse[] = [
  {
    content: [text("Looking at a."), toolCall("read", { path: "a" }, "d1"), toolCall("write", { path: "out" }, "d2"), text("And b meanwhile."), toolCall("read", { path: "b" }, "d3"), text("That is all.")],
    delayMs: 1,
  },
  { content: [text("Done.")] },
];

/** Calls that must never execute twice (R13): the write. */
export const SCENARIO_D_NOT_REPLAY_SAFE = new Map([["d2", "write"]]);

export function scenarioDOptions(world: World): AgentRunOptions {
  const counted = (id: string) => (world.executions[id] = (world.executions[id] ?? 0) + 1);
  const tools: AgentTool[] = [
    {
      name: "read",
      label: "read",
      description: "read a file",
      parameters: { type: "object", properties: { path: { type: "string" } } },
      replay: "safe",
      isConcurrencySafe: () => true,
      execute: async (id, params: { path: string }) => (counted(id), await after(3), ok(`contents of ${params.path}`)),
    },
    {
      name: "write",
      label: "write",
      description: "write a file",
      parameters: { type: "object", properties: { path: { type: "string" } } },
      execute: async (id) => (counted(id), await Promise.race([firstResponseEnded, after(100)]), await after(3), ok("written")),
    },
  ];
  const config: AgentLoopConfig = { model: scriptedModel, convertToLlm: defaultConvertToLlm, streamingToolExecution: true };
  let endFirstResponse = () => {};
  const firstResponseEnded = new Promise<void>((resolve) => (endFirstResponse = resolve));
  const scripted = scriptedStreamFn((request) => {
    const answered = request.context.messages.filter((message) => message.role === "assistant").length;
    return responses[Math.min(answered, responses.length - 1)];
  });
  const streamFn: typeof scripted = Object.assign((...args: Parameters<typeof scripted>) => {
    const stream = scripted(...args);
    void Promise.resolve(stream).then((events) => events.result()).then(endFirstResponse, endFirstResponse);
    return stream;
  }, scripted);
  return { streamFn, tools, config, clock: fixedClock };
}
