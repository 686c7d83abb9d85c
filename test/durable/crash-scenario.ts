/**
 * The crash test's session (issue 20 acceptance): a 5-turn run over the scripted model, each turn
 * a parallel batch of three calls (`read` is `replay: "safe"`, `write` and `fetch` are not), then
 * an answer. The model answers by the number of assistant messages it is shown, the clock reads
 * the same everywhere, and each tool appends its executions to a side file outside the store, so
 * any process (the first, or the one that resumes it) plays the same session.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import type { AgentLoopConfig, AgentMessage, AgentTool, AgentToolResult, Clock, ScriptedResponse, StreamFn } from "../../src/index.js";
import { Agent, scriptedModel, scriptedStreamFn, systemClock, text, toolCall } from "../../src/index.js";
import type { DurableOptions } from "../../src/durable/index.js";

export const TURNS = 5;
export const fixedClock: Clock = { now: () => 1_800_000_000_000, monotonic: () => 0, setTimer: (ms, fire) => systemClock.setTimer(ms, fire) };
export const prompt: AgentMessage = { role: "user", content: "go", timestamp: fixedClock.now() };

const ok = (value: string): AgentToolResult => ({ content: [{ type: "text", text: value }], details: { value } });
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `again`: the request was made before (a resume re-requests what was in flight): a real model answers differently. */
function response(turn: number, again = 0): ScriptedResponse {
  // The marker leads, so a re-requested answer differs from its first delta (a splice shows).
  const said = (words: string) => (again > 0 ? `(asked again ${again}) ${words}` : words);
  if (turn >= TURNS) return { content: [text(said("All done."))] };
  return {
    content: [
      text(said(`Turn ${turn}.`)),
      toolCall("read", { path: `f${turn}` }, `t${turn}-read`),
      toolCall("write", { path: `f${turn}`, text: "x" }, `t${turn}-write`),
      toolCall("fetch", { url: `u${turn}` }, `t${turn}-fetch`),
    ],
  };
}

export interface CrashSession {
  config: AgentLoopConfig;
  tools: AgentTool[];
  streamFn: StreamFn;
}

/**
 * The session's implementations; `executions` is the side file each execution is appended to (or a
 * counter, in process). `requests`: a side file of the requests made per turn, so a request made
 * again (in any process) is answered differently, as a real model would.
 */
export function crashSession(
  executions: string | ((id: string) => void),
  { fast = false, requests, streaming = false }: { fast?: boolean; requests?: string; streaming?: boolean } = {},
): CrashSession {
  const counted = typeof executions === "string" ? (id: string) => appendFileSync(executions, `${id}\n`) : executions;
  // Different delays per call and turn, so completion order differs from source order.
  // (`fast`: no delays, for the in-process test that resumes at every record.)
  const wait = (id: string) => delay(fast ? 0 : 1 + ((id.length * 7 + Number(id[1])) % 4));
  const tool = (name: string, safe: boolean): AgentTool => ({
    name,
    label: name,
    description: name,
    parameters: { type: "object", properties: { path: { type: "string" }, text: { type: "string" }, url: { type: "string" } } },
    ...(safe ? { replay: "safe" as const } : {}),
    // R70 (`streaming`): every call may start while the response still streams.
    ...(streaming ? { isConcurrencySafe: () => true } : {}),
    execute: async (id, params, _signal, onUpdate) => {
      counted(id);
      onUpdate?.(ok(`working on ${id}`));
      await wait(id);
      return ok(`${name} ${JSON.stringify(params)} done`);
    },
  });
  const assistants = (messages: readonly { role: string }[]) => messages.filter((message) => message.role === "assistant").length;
  return {
    config: { model: scriptedModel, convertToLlm: (messages) => messages as never, ...(streaming ? { streamingToolExecution: true } : {}) },
    tools: [tool("read", true), tool("write", false), tool("fetch", false)],
    streamFn: scriptedStreamFn(({ context }) => {
      const turn = assistants(context.messages);
      let again = 0;
      if (requests) {
        again = (existsSync(requests) ? readFileSync(requests, "utf8").split("\n").filter((line) => line === String(turn)).length : 0);
        appendFileSync(requests, `${turn}\n`);
      }
      return { ...response(turn, again), delayMs: fast ? 0 : 1 };
    }),
  };
}

/** Executions per tool-call id, from the side file. */
export function executionCounts(executions: string): Record<string, number> {
  const counts: Record<string, number> = {};
  if (!existsSync(executions)) return counts;
  for (const id of readFileSync(executions, "utf8").split("\n").filter(Boolean)) counts[id] = (counts[id] ?? 0) + 1;
  return counts;
}

/** The same session through an Agent (R80, R81: `durable`, `agent.resume()`). */
export function crashAgent(session: CrashSession, durable: DurableOptions): Agent {
  const streaming = session.config.streamingToolExecution === true ? { streamingToolExecution: true } : {};
  return new Agent({ streamFn: session.streamFn, initialState: { model: scriptedModel, tools: session.tools }, clock: fixedClock, durable, ...streaming });
}
