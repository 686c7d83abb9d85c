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
import { notifyStreams, streamAgentEvents, streamSessionOf } from "./agent-stream.js";

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const userMessage = (text: string): AgentMessage => ({ role: "user", content: [{ type: "text", text }], timestamp: Date.now() });
const streamResponse = (body: ReadableStream<Uint8Array>) => new Response(body, { headers: UI_MESSAGE_STREAM_HEADERS });

function queueCounts(agent: Agent): { steering: number; followUp: number } {
  const { steering, followUp } = agent.queuedMessages;
  return { steering: steering.length, followUp: followUp.length };
}

/** An approval decision the session refused: a typed 4xx, never a crash. */
function decide(decision: () => void): Response {
  try {
    decision();
    return json({ decided: true });
  } catch (error) {
    if (!(error instanceof ApprovalError)) throw error;
    throw new UIStreamRequestError(error.code === "invalid" ? "invalid_request" : "unknown_approval", error.code === "invalid" ? 400 : 409, error.message);
  }
}

/** R81 through the route: resolves once the stored run went live (true) or there was none (false). */
function resumeRun(agent: Agent): Promise<Response> {
  if (agent.state.isStreaming) throw new UIStreamRequestError("busy", 409, "A run is in progress");
  return new Promise<boolean>((resolve, reject) => {
    agent.resume({ onLive: () => resolve(true) }).then(resolve, reject);
  }).then(
    (resumed) => json({ resumed }),
    (error: unknown) => {
      throw new UIStreamRequestError("not_durable", 409, error instanceof Error ? error.message : String(error));
    },
  );
}

/**
 * The answer to a request that needs a run in progress, for a chat with no open session: what an
 * idle session answers (a reconnect 204, a stop `{ stopped: false }`, a queued message or an
 * approval decision 409), or undefined for the requests that open the chat (a new message,
 * `resume`, the event stream).
 */
export function answerWithoutSession(request: ChatRequest): Response | undefined {
  switch (request.kind) {
    case "resume":
      return new Response(null, { status: 204 });
    case "stop":
      return json({ stopped: false });
    case "queue":
    case "approvals":
      throw new UIStreamRequestError("no_active_run", 409, "No run is in progress in this chat: send the message as a prompt");
    case "approve":
    case "reject":
      throw new UIStreamRequestError("unknown_approval", 409, `No call waits for approval ${JSON.stringify(request.approvalId)}: no run is in progress in this chat`);
    default:
      return undefined;
  }
}

export function handleChatRequest(agent: Agent, source: SequencedEventSource, request: ChatRequest, signal?: AbortSignal): Response | Promise<Response> {
  const busy = agent.state.isStreaming;
  switch (request.kind) {
    case "events": {
      if (!("transcriptLengthAtRunStart" in source)) throw new UIStreamRequestError("unsupported_source", 501, "The agent event stream needs a source that knows where its run started (runEventBuffer)");
      const eventSource = source as SequencedEventSource & { transcriptLengthAtRunStart: number };
      return streamAgentEvents(streamSessionOf(agent, eventSource), { ...(request.after !== undefined ? { after: request.after } : {}), ...(request.epoch ? { epoch: request.epoch } : {}), ...(signal ? { signal } : {}) });
    }
    case "run":
      // R53: a prompt while a run goes is queued into it, never a second run.
      if (busy) {
        agent.steer(userMessage(request.text));
        notifyStreams(source, "status");
        return json({ queued: "steer", ...queueCounts(agent) }, 202);
      }
      // The run's outcome travels on the event stream; its failure too (agent_end with an error).
      agent.prompt(request.text).catch(() => {});
      return json({ started: true }, 202);
    case "approve":
      return decide(() => agent.approve(request.approvalId, request.options));
    case "reject":
      return decide(() => agent.reject(request.approvalId, request.reason));
    case "resumeRun":
      return resumeRun(agent);
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
      notifyStreams(source, "status");
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
