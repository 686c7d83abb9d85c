/**
 * Scenario helpers of the streaming-tool suites (SPEC R70–R73): a run on the injected clock, the
 * scripted model pausing between blocks on that clock, and tools that take scripted time, so
 * every interleaving is decided by time that only the test moves (no sleeps).
 */
import type { AgentEvent, AgentLoopConfig, AgentTool, AssistantMessage, ScriptedResponse, StreamFn, ToolCall } from "../../src/index.js";
import { PushAssistantStream, runAgentLoop, scriptedStreamFn } from "../../src/index.js";
import { manualClock, ticks } from "../support/manual-clock.js";
import { baseConfig, ok, project, tool, user } from "./helpers.js";

export type ManualClock = ReturnType<typeof manualClock>;

/** A tool that takes `ms` on the clock (abortable: an aborted call ends with an error result), safe unless told. */
export function timedTool(clock: ManualClock, name: string, ms: number, extra: Partial<AgentTool> = {}): AgentTool {
  return tool(
    name,
    (_id, _args, signal) =>
      new Promise((resolve, reject) => {
        const cancel = clock.clock.setTimer(ms, () => resolve(ok(`${name} done`)));
        signal?.addEventListener("abort", () => (cancel(), reject(new Error(`${name} aborted`))), { once: true });
      }),
    { isConcurrencySafe: () => true, ...extra },
  );
}

/**
 * The final message's content rewritten from the streamed calls (a provider whose `done` message
 * differs from what it streamed: calls in another order, replaced or dropped), for the first response.
 */
export type FinalCalls = (streamed: ToolCall[]) => AssistantMessage["content"];

/** `streamFn` with the first response's `done` message given `final`'s content; every other event as played. */
export function withFinalCalls(streamFn: StreamFn, final: FinalCalls): StreamFn {
  let request = 0;
  return (model, context, options) => {
    const first = request++ === 0;
    const inner = streamFn(model, context, options);
    if (!first) return inner;
    const stream = new PushAssistantStream();
    void (async () => {
      for await (const event of await inner) {
        if (event.type !== "done") stream.push(event);
        else stream.push({ ...event, message: { ...event.message, content: final(event.message.content.filter((block): block is ToolCall => block.type === "toolCall")) } });
      }
    })();
    return stream;
  };
}

export interface TimedRun {
  /** `t=<ms since start> <event>`, deltas left out. */
  log: string[];
  events: AgentEvent[];
  output: unknown[];
}

/**
 * Runs `responses` with `tools` on a manual clock, moving it `stepMs` at a time once the run is
 * idle, until the run ends. `act(t)` runs at each step (e.g. an abort at a given time).
 */
export async function timedRun(
  responses: ScriptedResponse[],
  tools: (clock: ManualClock) => AgentTool[],
  config: Partial<AgentLoopConfig> = {},
  options: { stepMs?: number; act?: (t: number, controller: AbortController) => void; streaming?: boolean; finalCalls?: FinalCalls } = {},
): Promise<TimedRun> {
  const clock = manualClock(0);
  const scripted = scriptedStreamFn(responses, { clock: clock.clock });
  const stream = options.finalCalls ? withFinalCalls(scripted, options.finalCalls) : scripted;
  const log: string[] = [];
  const events: AgentEvent[] = [];
  const controller = new AbortController();
  let done = false;
  const run = runAgentLoop(
    [user("go")],
    { messages: [], tools: tools(clock) },
    baseConfig({ streamingToolExecution: options.streaming ?? true, ...config }),
    (event) => {
      events.push(event);
      if (event.type !== "message_update") log.push(`t=${clock.now()} ${project(event)}`);
    },
    controller.signal,
    stream,
    { clock: clock.clock },
  ).finally(() => (done = true));
  const step = options.stepMs ?? 100;
  for (let guard = 0; !done && guard < 10_000; guard++) {
    await ticks(2);
    if (done) break;
    clock.advance(step);
    options.act?.(clock.now(), controller);
  }
  const output = await run;
  return { log, events, output };
}
