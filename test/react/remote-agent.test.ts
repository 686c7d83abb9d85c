/**
 * createRemoteAgent against the route on a real server (port 0): the page's copy of a session
 * that lives on the server equals the session's own transcript, through parallel tools,
 * approvals decided from the client (R82), steering mid-run (R53), a stop (R29) and a reconnect
 * that resumes from the last sequence number it had (no event twice, none missing).
 */
import { createServer } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, defineTool, type AgentToolResult } from "../../src/index.js";
import { scriptedModel, scriptedStreamFn, text, toolCall, type Script } from "../../src/testing/index.js";
import { createChatRoute, type ChatRoute } from "../../src/ui-stream/index.js";
import { agentStore, createRemoteAgent, RemoteAgentError, type RemoteAgent } from "../../src/react/index.js";
import { listenOnLoopback } from "../support/loopback-server.js";
import { serveWeb } from "../support/web-handler.js";

const STORY = Array.from({ length: 120 }, (_, i) => `word${i}`).join(" ");

let cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

function tools() {
  let release: () => void = () => {};
  const lookup = defineTool({ name: "lookup", description: "lookup", parameters: z.object({ q: z.string() }), execute: async (_id, { q }) => ({ content: [{ type: "text", text: `found ${q}` }], details: {} }) });
  const gated = (name: string) => defineTool({ name, description: name, parameters: z.object({}), needsApproval: true, execute: async () => ({ content: [{ type: "text", text: `${name} done` }], details: {} }) });
  const slow = defineTool({
    name: "slow",
    description: "slow",
    parameters: z.object({}),
    execute: () => new Promise<AgentToolResult<unknown>>((resolve) => (release = () => resolve({ content: [{ type: "text", text: "slow done" }], details: {} }))),
  });
  return { list: [lookup, gated("write"), gated("deploy"), slow], release: () => release() };
}

async function serve(script: Script): Promise<{ agent: Agent; route: ChatRoute; url: string; requests: string[]; release: () => void }> {
  const { list, release } = tools();
  const agent = new Agent({ streamFn: scriptedStreamFn(script), initialState: { model: scriptedModel, tools: list } });
  const route = createChatRoute({ createAgent: () => agent });
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    void serveWeb(req, res, route.handle);
  });
  const { url, close } = await listenOnLoopback(server);
  cleanups.push(close, () => route.close());
  return { agent, route, url: `${url}/api/chat`, requests, release };
}

function remote(url: string, options: { storage?: Storage; errors?: unknown[] } = {}): RemoteAgent {
  const agent = createRemoteAgent({ url, chatId: "c1", ...(options.storage ? { storage: options.storage } : {}), onError: (error) => options.errors?.push(error), retryMs: 50 });
  cleanups.push(() => agent.close());
  const seen: string[] = [];
  logs.set(agent, seen);
  agent.subscribe((event) => void seen.push(event.type));
  return agent;
}

const logs = new WeakMap<RemoteAgent, string[]>();
/** The event types `agent` applied so far. */
const log = (agent: RemoteAgent) => logs.get(agent)!;
const count = (agent: RemoteAgent, type: string) => log(agent).filter((seen) => seen === type).length;

/** Resolves once `condition` holds: now, or after one of the events or status changes that follow. */
function until(agent: RemoteAgent, condition: () => boolean): Promise<void> {
  if (condition()) return Promise.resolve();
  return new Promise((resolve) => {
    const check = () => {
      if (!condition()) return;
      stopEvents();
      stopChanges();
      resolve();
    };
    const stopEvents = agent.subscribe(check);
    const stopChanges = agent.subscribeChanges(check);
  });
}

function memoryStorage(): Storage {
  const items = new Map<string, string>();
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
    removeItem: (key) => void items.delete(key),
    clear: () => items.clear(),
    key: () => null,
    get length() {
      return items.size;
    },
  };
}

const streamedText = (agent: RemoteAgent) =>
  ((agent.state.streamingMessage as { content?: { type: string; text?: string }[] } | undefined)?.content ?? []).map((part) => part.text ?? "").join("");

describe("createRemoteAgent: a session on the server, seen from the client", () => {
  it("R25/R82/R53/R29: parallel tools, approve one and reject one, steer mid-run, stop: the client's transcript equals the session's", async () => {
    const server = await serve([
      { content: [text("Checking both."), toolCall("lookup", { q: "a" }, "l1"), toolCall("lookup", { q: "b" }, "l2")] },
      { content: [text("Both found.")] },
      { content: [toolCall("write", {}, "w1"), toolCall("deploy", {}, "d1")] },
      { content: [text("Wrote it; no deploy.")] },
      { content: [text("Step one."), toolCall("slow", {}, "s1")] },
      { content: [text("Faster, then.")] },
      { content: [text(STORY)], chunkSize: 6, delayMs: 2 },
    ]);
    const seen: string[] = [];
    server.agent.subscribe((event) => void seen.push(event.type), { runtimeEvents: true });
    const client = remote(server.url);
    await client.ready;

    await client.prompt("Look up a and b");
    await until(client, () => count(client, "agent_end") === 1);
    expect(client.state.messages).toEqual(server.agent.state.messages);

    await client.prompt("Write and deploy");
    await until(client, () => client.pendingApprovals.length === 2);
    expect(client.pendingApprovals.map(({ toolName, approvalId }) => [toolName, approvalId])).toEqual(server.agent.pendingApprovals.map(({ toolName, approvalId }) => [toolName, approvalId]));
    const [write, deploy] = client.pendingApprovals;
    await client.approve(write!.approvalId);
    await client.reject(deploy!.approvalId, "Not today");
    await until(client, () => count(client, "agent_end") === 2);
    expect(client.state.messages).toEqual(server.agent.state.messages);

    // A prompt while the run waits on a tool is steered into it (R53): the queue shows it.
    await client.prompt("Count slowly");
    await until(client, () => client.state.pendingToolCalls.has("s1"));
    await client.prompt("Faster please");
    expect(server.agent.queuedMessages.steering.length).toBe(1);
    await until(client, () => client.queuedMessages.steering.length === 1);
    server.release();
    await until(client, () => count(client, "agent_end") === 3);
    expect(client.queuedMessages.steering).toEqual([]);

    await client.prompt("Tell a long story");
    await until(client, () => streamedText(client).split(" ").length > 5);
    await client.abort();
    await until(client, () => count(client, "agent_end") === 4);
    await server.agent.waitForIdle();
    expect(client.lastEndReason).toBe("aborted");
    expect(client.state.messages).toEqual(server.agent.state.messages);
    expect([client.state.isStreaming, client.pendingApprovals, [...client.state.pendingToolCalls]]).toEqual([false, [], []]);
    // Every event the session emitted reached the client once, in order.
    expect(log(client)).toEqual(seen);
  });

  it("a reconnect resumes after the last sequence number the client had: no event twice, none missing", async () => {
    const server = await serve([{ content: [text(STORY), toolCall("slow", {}, "s1")], chunkSize: 6, delayMs: 2 }, { content: [text("Done.")] }]);
    const storage = memoryStorage();
    const first = remote(server.url, { storage });
    await first.ready;
    await first.prompt("Tell a story");
    await until(first, () => streamedText(first).split(" ").length > 10);
    const shown = streamedText(first);
    first.close();
    const lastSeq = first.lastSeq;

    const second = remote(server.url, { storage });
    const resets: string[] = [];
    second.subscribeChanges((what) => void (what === "all" && resets.push(what)));
    // The page shows what it had at once, before the stream answers.
    expect(streamedText(second)).toBe(shown);
    const texts: string[] = [];
    // The story's deltas (until its message_end).
    second.subscribe((event) => void (event.type === "message_update" && count(second, "message_end") === 0 && texts.push(streamedText(second))));
    await second.ready;
    await until(second, () => second.state.pendingToolCalls.has("s1"));
    server.release();
    await until(second, () => count(second, "agent_end") === 1);
    expect(second.openedAfter).toEqual([lastSeq]);
    expect(resets).toEqual([]);
    expect(second.state.messages).toEqual(server.agent.state.messages);
    // The streamed text grew from what the first client showed, each delta once.
    expect([texts[0]!.length > shown.length, texts.every((value, i) => value.startsWith(i === 0 ? shown : texts[i - 1]!)), texts.at(-1)]).toEqual([true, true, STORY]);
    expect(server.requests.filter((line) => line.startsWith("GET")).map((line) => line.replace(/epoch=[^&]+/, "epoch=E"))).toEqual([
      "GET /api/chat/c1/events",
      `GET /api/chat/c1/events?after=${lastSeq}&epoch=E`,
    ]);
  });

  it("a client that joins mid-run, or whose numbering is from another epoch, restarts from the run's start", async () => {
    const server = await serve([{ content: [text("Step one."), toolCall("slow", {}, "s1")] }, { content: [text("Done.")] }]);
    const starter = remote(server.url);
    await starter.ready;
    await starter.prompt("Go");
    await until(starter, () => starter.state.pendingToolCalls.has("s1"));
    const storage = memoryStorage();
    storage.setItem("xstate-agent-loop:remote:" + server.url + ":c1", JSON.stringify({ epoch: "elsewhere", seq: 3, messages: [], isStreaming: false, pendingToolCalls: [], pendingApprovals: [], status: starter["current"].status }));
    const stale = remote(server.url, { storage });
    const fresh = remote(server.url);
    await Promise.all([stale.ready, fresh.ready]);
    // Both replayed the run in progress from its start: the prompt and the first answer are there.
    expect([stale.state.messages.map((m) => m.role), fresh.state.messages.map((m) => m.role), fresh.state.isStreaming, [...fresh.state.pendingToolCalls]]).toEqual([
      ["system", "user", "assistant"],
      ["system", "user", "assistant"],
      true,
      ["s1"],
    ]);
    server.release();
    await Promise.all([until(stale, () => count(stale, "agent_end") === 1), until(fresh, () => count(fresh, "agent_end") === 1)]);
    expect([stale.state.messages, fresh.state.messages]).toEqual([server.agent.state.messages, server.agent.state.messages]);
    expect(stale.openedAfter).toEqual([3]);
  });

  it("the store reads a remote session as it reads an Agent: the transcript slice changes at message ends only", async () => {
    const server = await serve([{ content: [text(STORY)], chunkSize: 4, delayMs: 1 }]);
    const client = remote(server.url);
    const store = agentStore(client, { schedule: (flush) => queueMicrotask(flush) });
    const transcripts: number[] = [];
    let streamingNotes = 0;
    store.subscribeTranscript(() => transcripts.push(store.getTranscript().length));
    store.subscribeStreaming(() => streamingNotes++);
    await client.ready;
    await client.prompt("Tell it");
    await until(client, () => count(client, "agent_end") === 1);
    expect([transcripts, store.getStatus().value, store.getStatus().lastEndReason]).toEqual([[1, 2, 3], "idle", "completed"]);
    expect(streamingNotes).toBeGreaterThan(3);
  });

  it("a refused action is a typed error: an unknown approval, a malformed after", async () => {
    const server = await serve([{ content: [text("Hi.")] }]);
    const errors: unknown[] = [];
    const client = remote(server.url, { errors });
    await client.ready;
    const refused = await client.approve("approval-9-9").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RemoteAgentError);
    expect([(refused as RemoteAgentError).code, (refused as RemoteAgentError).status]).toEqual(["unknown_approval", 409]);
    const bad = await fetch(`${server.url}/c1/events?after=-1`);
    expect([bad.status, ((await bad.json()) as { error: { code: string } }).error.code]).toEqual([400, "invalid_request"]);
    expect(errors).toEqual([]);
  });
});
