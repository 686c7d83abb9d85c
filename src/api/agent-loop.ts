/**
 * The four loop entry points (SPEC "Entry points"), signature-compatible with pi-agent-core 1.6.
 * None of them mutates the caller's `context.messages`. An omitted `streamFn` is the default set
 * with `setDefaultStreamFn`; with none set, each refuses at the call with a `TypeError`. The
 * stream-returning two throw (R2); the promise-returning two reject, as pi's async functions do,
 * so a caller's `.catch` sees every refusal.
 */
import type { AgentContext, AgentEventSink, AgentLoopConfig, AgentMessage, StreamFn } from "../types.js";
import { AgentEventStream } from "../bridge/event-stream.js";
import { checkRunArguments, startRun, type RunOptions } from "./start-run.js";
import { resolveStreamFn } from "./default-stream-fn.js";
import { checkLoopArguments } from "../boundary/run-arguments.js";

/** R1: a new run with `prompts`. Returns at once; events are buffered until a consumer attaches. */
export function agentLoop(
  prompts: AgentMessage[],
  context: AgentContext,
  config: AgentLoopConfig,
  signal?: AbortSignal,
  streamFn?: StreamFn,
  options?: RunOptions,
): AgentEventStream {
  const fn = resolveStreamFn(streamFn);
  checkRunArguments(prompts, context, config, fn);
  checkLoopArguments(prompts, context, config, signal);
  return observe(prompts, context, config, signal, fn, options);
}

/** R2: continue from the context's last (non-assistant) message. Throws synchronously otherwise. */
export function agentLoopContinue(
  context: AgentContext,
  config: AgentLoopConfig,
  signal?: AbortSignal,
  streamFn?: StreamFn,
  options?: RunOptions,
): AgentEventStream {
  const fn = resolveStreamFn(streamFn);
  checkRunArguments(null, context, config, fn);
  checkLoopArguments(null, context, config, signal);
  return observe(null, context, config, signal, fn, options);
}

/** R1 with an awaited sink: the loop takes no step until `emit`'s promise for the previous event settles. */
export function runAgentLoop(
  prompts: AgentMessage[],
  context: AgentContext,
  config: AgentLoopConfig,
  emit: AgentEventSink,
  signal?: AbortSignal,
  streamFn?: StreamFn,
  options?: RunOptions,
): Promise<AgentMessage[]> {
  return refusedOr(() => {
    const fn = resolveStreamFn(streamFn);
    checkRunArguments(prompts, context, config, fn);
    checkLoopArguments(prompts, context, config, signal);
    return startRun({ prompts, context, config, sink: emit, signal, streamFn: fn, options });
  });
}

/** R2 with an awaited sink. */
export function runAgentLoopContinue(
  context: AgentContext,
  config: AgentLoopConfig,
  emit: AgentEventSink,
  signal?: AbortSignal,
  streamFn?: StreamFn,
  options?: RunOptions,
): Promise<AgentMessage[]> {
  return refusedOr(() => {
    const fn = resolveStreamFn(streamFn);
    checkRunArguments(null, context, config, fn);
    checkLoopArguments(null, context, config, signal);
    return startRun({ prompts: null, context, config, sink: emit, signal, streamFn: fn, options });
  });
}

/** The run `start` begins, or its refusal as a rejected promise (never a synchronous throw). */
function refusedOr(start: () => Promise<AgentMessage[]>): Promise<AgentMessage[]> {
  try {
    return start();
  } catch (error) {
    return Promise.reject(error);
  }
}

function observe(
  prompts: AgentMessage[] | null,
  context: AgentContext,
  config: AgentLoopConfig,
  signal: AbortSignal | undefined,
  streamFn: StreamFn,
  options: RunOptions | undefined,
): AgentEventStream {
  let settle!: { resolve: (messages: AgentMessage[]) => void; reject: (error: unknown) => void };
  const result = new Promise<AgentMessage[]>((resolve, reject) => (settle = { resolve, reject }));
  const stream = new AgentEventStream(result);
  // The stream completes before result() resolves, so an iterator never outlives the run.
  startRun({ prompts, context, config, sink: (event) => stream.push(event), signal, streamFn, options }).then(
    (messages) => {
      stream.end();
      settle.resolve(messages);
    },
    (error: unknown) => {
      stream.end();
      settle.reject(error);
    },
  );
  return stream;
}
