/**
 * One request against one session: the mapping from `useChat`'s requests (and ours) to the
 * Agent's API. A prompt while a run goes is queued (R53), never a second run; stop aborts (R29);
 * a client that goes away only stops reading.
 */
import type { Agent } from "../agent/agent.js";
import { ApprovalError } from "../agent/approvals.js";
import type { AgentMessage } from "../protocol/messages.js";
import { UIStreamRequestError } from "./errors.js";
import type { SequencedEventSource } from "./event-source.js";
import type { ChatRequest } from "./request.js";
import { sseChunk, SSE_DONE, UI_MESSAGE_STREAM_HEADERS } from "./sse.js";
import { streamRun } from "./stream-run.js";

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const userMessage = (text: string): AgentMessage => ({ role: "user", content: [{ type: "text", text }], timestamp: Date.now() });
const streamResponse = (body: ReadableStream<Uint8Array>) => new Response(body, { headers: UI_MESSAGE_STREAM_HEADERS });

function queueCounts(agent: Agent): { steering: number; followUp: number } {
  const { steering, followUp } = agent.queuedMessages;
  return { steering: steering.length, followUp: followUp.length };
}

export function handleChatRequest(agent: Agent, source: SequencedEventSource, request: ChatRequest, signal?: AbortSignal): Response {
  const busy = agent.state.isStreaming;
  switch (request.kind) {
    case "resume":
      // useChat asks on every page load (`resume: true`): no run, nothing to resume.
      if (!busy) return new Response(null, { status: 204 });
      return streamResponse(streamRun(source, { subscribeAfter: source.runStartAfter, signal }));
    case "stop":
      if (busy) agent.abort();
      return json({ stopped: busy });
    case "queue":
      if (!busy) throw new UIStreamRequestError("no_active_run", 409, "No run is in progress: send the message as a prompt");
      if (request.queue === "steer") agent.steer(userMessage(request.text));
      else agent.followUp(userMessage(request.text));
      return json({ queued: request.queue, ...queueCounts(agent) }, 202);
    case "approvals": {
      if (!busy) throw new UIStreamRequestError("no_active_run", 409, "No run is in progress: its approvals were settled when it ended");
      const delivered = source.lastSeq;
      const pending = new Set(agent.pendingApprovals.map((request) => request.approvalId));
      for (const decision of request.decisions) {
        if (!pending.has(decision.approvalId)) continue; // decided already (another tab, an earlier post)
        try {
          if (decision.approved) agent.approve(decision.approvalId);
          else agent.reject(decision.approvalId, decision.reason ?? "");
        } catch (error) {
          // Settled between the check and the call (an abort): the stream shows the outcome.
          if (!(error instanceof ApprovalError)) throw error;
        }
      }
      return streamResponse(streamRun(source, { subscribeAfter: source.runStartAfter, delivered, signal }));
    }
    case "prompt": {
      if (busy) {
        // R53: queued into the run in progress, not a second run; the live response shows it when taken in.
        agent.steer(userMessage(request.text));
        return streamResponse(
          new ReadableStream({
            start(controller) {
              controller.enqueue(sseChunk({ type: "start" }));
              controller.enqueue(sseChunk({ type: "finish", finishReason: "other" }));
              controller.enqueue(SSE_DONE);
              controller.close();
            },
          }),
        );
      }
      const subscribeAfter = source.lastSeq;
      const run = agent.prompt(request.text);
      return streamResponse(streamRun(source, { subscribeAfter, signal, run }));
    }
  }
}
