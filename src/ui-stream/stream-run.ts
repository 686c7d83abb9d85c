/**
 * One HTTP response's worth of a run: its parts from a point on, until the run ends or waits for
 * decisions only (then `useChat` shows the approval cards and posts the answers, which continue the
 * same assistant message). The response's end is never the run's: a client that goes away only
 * unsubscribes (disconnect is not stop).
 */
import type { SequencedEventSource } from "./event-source.js";
import { UIStreamEncoder } from "./encoder.js";
import { SSE_DONE, sseChunk } from "./sse.js";

export interface StreamRunOptions {
  /** Where to subscribe: the `seq` before the run's `agent_start` (replay), or the source's last one (a run about to start). */
  subscribeAfter: number;
  /**
   * Parts of events up to this `seq` were delivered already (a continuation after approvals):
   * they are encoded, to know the run's state, but not sent. Absent: `subscribeAfter`.
   */
  delivered?: number;
  /** The request's signal: its abort ends this response, not the run. */
  signal?: AbortSignal;
  /** The run this response waits for, when it starts it: a run that fails before it starts ends the response with an `error` part. */
  run?: Promise<unknown>;
}

export function streamRun(source: SequencedEventSource, options: StreamRunOptions): ReadableStream<Uint8Array> {
  const delivered = options.delivered ?? options.subscribeAfter;
  let unsubscribe: (() => void) | undefined;
  let done = false;
  const finish = (controller?: ReadableStreamDefaultController<Uint8Array>) => {
    if (done) return;
    done = true;
    unsubscribe?.();
    options.signal?.removeEventListener("abort", onAbort);
    try {
      controller?.enqueue(SSE_DONE);
      controller?.close();
    } catch {
      // The reader went away first: nothing left to close.
    }
  };
  let onAbort = () => {};
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const encoder = new UIStreamEncoder();
      onAbort = () => finish();
      if (options.signal?.aborted) return finish(controller);
      options.signal?.addEventListener("abort", onAbort, { once: true });
      let started = false;
      unsubscribe = source.subscribe(
        ({ seq, event }) => {
          if (done) return;
          const chunks = encoder.encode(event, seq);
          if (seq <= delivered) {
            // Already on the client: only the message's start, so the parts that follow join it.
            if (!started && chunks[0]?.type === "start") {
              started = true;
              controller.enqueue(sseChunk(chunks[0]));
            }
            return;
          }
          for (const chunk of chunks) {
            if (chunk.type === "start") started = true;
            controller.enqueue(sseChunk(chunk));
          }
          if (encoder.runEnded) return finish(controller);
          if (encoder.waitingForDecision) {
            // The run waits for people: this response ends (useChat posts the decisions).
            controller.enqueue(sseChunk({ type: "finish", finishReason: "tool-calls" }));
            finish(controller);
          }
        },
        { after: options.subscribeAfter },
      );
      // Subscribed to a run that had ended and was replayed whole.
      if (done) unsubscribe();
      options.run?.then(
        () => finish(controller),
        (error: unknown) => {
          if (done) return;
          controller.enqueue(sseChunk({ type: "error", errorText: error instanceof Error ? error.message : String(error) }));
          finish(controller);
        },
      );
    },
    cancel() {
      finish();
    },
  });
}
