/**
 * Issue 37 on Restate (SPEC R110 with R81, R90): a replayed step emits no span twice. A session
 * traced by `otelObserver` (an in-memory exporter in each worker, every span printed as it ends) is
 * run on a worker killed mid-run and finished by another, which replays Restate's journal: across
 * the two workers each request has one `chat` span and each tool call one `execute_tool` span.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/types.js";
import { startLocalRestateServer, type LocalRestateServer } from "../../src/restate/local-server.js";
import { freePort, startWorker } from "./support.js";

let server: LocalRestateServer;

beforeAll(async () => {
  server = await startLocalRestateServer({ retryIntervalMs: 50 });
}, 30_000);
afterAll(() => server?.stop());

const call = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${server.ingressUrl}/${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`);
  return response.json();
};

interface PrintedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
}

/**
 * The spans as a tree of lines (`worker: name [call id]`), children in the order they ended (a
 * parent after its children), a batch's parallel calls by call id (they end in completion order).
 */
function tree(spans: readonly (PrintedSpan & { worker: string })[]): string[] {
  const ids = new Set(spans.map((span) => span.spanId));
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    const children = spans.filter((s) => (s.parentSpanId && ids.has(s.parentSpanId) ? s.parentSpanId : undefined) === parent);
    const callId = (span: PrintedSpan) => String(span.attributes["gen_ai.tool.call.id"] ?? "");
    for (let i = 0; i < children.length; ) {
      let j = i + 1;
      if (children[i].name.startsWith("execute_tool")) {
        while (j < children.length && children[j].name.startsWith("execute_tool")) j++;
        children.splice(i, j - i, ...children.slice(i, j).sort((a, b) => callId(a).localeCompare(callId(b))));
      }
      i = j;
    }
    for (const span of children) {
      lines.push(`${"  ".repeat(depth)}${span.worker}: ${span.name}${callId(span) ? ` ${callId(span)}` : ""}`);
      walk(span.spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines;
}

describe("R110, R90: spans of a Restate session across a worker kill", () => {
  it("R110, R81: a worker killed mid-run: each request's chat span and each call's execute_tool span once across both workers", async () => {
    const key = "traced";
    // Calls of 1 s: none of turn 2's ends before the kill, so each is in flight then (or not begun).
    const env = { OTEL: "1", TOOL_MS: "1000" };
    const port = await freePort();
    const first = await startWorker(port, env);
    await server.registerDeployment(`http://127.0.0.1:${port}`);
    const reply = call(`agentSession/${key}/prompt`, { text: key }, { "idempotency-key": key });
    // Mid-run: turn 2's calls running (turns 0 and 1 ended, their spans exported by the first worker).
    await first.executions(7);
    await first.kill();
    const second = await startWorker(port, env);
    try {
      const response = (await reply) as { messages: AgentMessage[] };
      const spans = [...first.spans.map((span) => ({ ...(span as PrintedSpan), worker: "first" })), ...second.spans.map((span) => ({ ...(span as PrintedSpan), worker: "second" }))];
      expect(response.messages.at(-1)).toMatchObject({ role: "assistant", content: [{ type: "text", text: "all done" }] });
      const calls = (turn: number, worker: string, depth: number) => [0, 1, 2].map((i) => `${"  ".repeat(depth)}${worker}: execute_tool work ${key}:t${turn}-${i}`);
      // The first worker's spans that ended before the kill: its run span and turn 2's never ended,
      // so their children have no parent here. The second worker's run replays turns 0–2 from the
      // journal (no span again: turn 2's chat was the first worker's) and traces what ran live:
      // turn 2's calls, in flight at the kill (once, from when it reached them), then turns 3–5.
      expect(tree(spans)).toEqual([
        "first: hook getSteeringMessages",
        "first: turn",
        "  first: chat scripted",
        ...calls(0, "first", 1),
        "first: hook getSteeringMessages",
        "first: turn",
        "  first: hook getSteeringMessages",
        "  first: chat scripted",
        ...calls(1, "first", 1),
        "first: hook getSteeringMessages",
        "first: hook getSteeringMessages",
        "first: chat scripted",
        "second: invoke_agent",
        "  second: turn",
        ...calls(2, "second", 2),
        "  second: hook getSteeringMessages",
        "  second: turn",
        "    second: hook getSteeringMessages",
        "    second: chat scripted",
        ...calls(3, "second", 2),
        "  second: hook getSteeringMessages",
        "  second: turn",
        "    second: hook getSteeringMessages",
        "    second: chat scripted",
        ...calls(4, "second", 2),
        "  second: hook getSteeringMessages",
        "  second: turn",
        "    second: hook getSteeringMessages",
        "    second: chat scripted",
        "  second: hook getSteeringMessages",
        "  second: hook getFollowUpMessages",
      ]);
      // Each of the 6 requests one chat span, each of the 15 calls one execute_tool span, across both workers.
      expect(spans.filter((span) => span.name.startsWith("chat ")).length).toBe(6);
      const executeSpans = spans.filter((span) => span.name.startsWith("execute_tool")).map((span) => span.attributes["gen_ai.tool.call.id"]);
      expect(executeSpans.length).toBe(15);
      expect(new Set(executeSpans).size).toBe(15);
      // The second worker's run span says it resumed (R81), and its spans are one trace.
      const run = second.spans.map((span) => span as PrintedSpan).find((span) => span.name === "invoke_agent")!;
      expect(run.attributes["xstate_agent_loop.resumed"]).toBe(true);
      expect(new Set(second.spans.map((span) => (span as PrintedSpan).traceId))).toEqual(new Set([run.traceId]));
    } finally {
      await second.kill();
    }
  }, 60_000);
});
