/**
 * Code written against pi's types compiles against ours when the import is swapped: pi's tools,
 * listeners, hooks and stream functions are accepted where ours are expected, and the messages a
 * run produces fit a pi-typed transcript (and pi's fit ours). The `expectTypeOf` checks and the
 * annotated values below are compiled by `npm run typecheck` (tsc over `test/`); the run checks that
 * what compiles also works.
 */
import { describe, expect, it } from "vitest";
import type * as Pi from "@earendil-works/pi-agent-core";
import type * as PiAi from "@earendil-works/pi-ai";
import type * as PiCompat from "@earendil-works/pi-ai/compat";
import {
  Agent,
  agentLoop,
  runAgentLoop,
  scriptedModel,
  scriptedStreamFn,
  text,
  toolCall,
  type AgentContext,
  type AgentEvent,
  type AgentEventSink,
  type AgentListener,
  type AgentLoopConfig,
  type AgentMessage,
  type AgentOptions,
  type AgentTool,
  type AgentToolResult,
  type AssistantMessage,
  type AssistantMessageEvent,
  type Message,
  type Model,
  type StreamFn,
  type ToolCall,
  type ToolResultMessage,
} from "../../src/index.js";

/** Compiles only when `From` is assignable to `To`; otherwise tsc's message names the field that differs. */
const accepts =
  <To>() =>
  <From extends To>(): true =>
    true;

/** The checks are tsc's (`npm run typecheck`); at run time they are `true`s. */
const compiles = (...checks: true[]) => expect(checks).not.toContain(false);

describe("pi's tools run as ours", () => {
  it("a pi AgentTool (any schema, any details) is an AgentTool, in an Agent and in a loop's context", () => {
    compiles(
      accepts<AgentTool>()<Pi.AgentTool>(),
      accepts<AgentTool>()<Pi.AgentTool<{ type: "object" }, { lines: number }>>(),
      accepts<AgentToolResult>()<Pi.AgentToolResult<{ lines: number }>>(),
      accepts<AgentContext>()<Pi.AgentContext>(),
      accepts<Parameters<typeof agentLoop>[1]["tools"]>()<[Pi.AgentTool]>(),
    );
  });
});

describe("our events reach pi-typed listeners", () => {
  it("every AgentEvent is a pi AgentEvent; a pi listener and a pi event sink are accepted", () => {
    compiles(
      accepts<Pi.AgentEvent>()<AgentEvent>(),
      accepts<AgentListener>()<(event: Pi.AgentEvent, signal: AbortSignal) => Promise<void> | void>(),
      accepts<AgentEventSink>()<Pi.AgentEventSink>(),
    );
  });
});

describe("pi's stream functions are ours", () => {
  it("a pi StreamFn (and pi-ai's streamSimple) is a StreamFn", () => {
    compiles(
      accepts<StreamFn>()<Pi.StreamFn>(),
      accepts<StreamFn>()<typeof PiCompat.streamSimple>(),
      accepts<ReturnType<StreamFn>>()<PiAi.AssistantMessageEventStream>(),
    );
  });
});

describe("pi's hooks and config are ours", () => {
  it("a pi AgentLoopConfig is an AgentLoopConfig, pi's AgentOptions are AgentOptions", () => {
    compiles(
      accepts<AgentLoopConfig>()<Pi.AgentLoopConfig>(),
      accepts<AgentOptions>()<Pi.AgentOptions>(),
      accepts<Model>()<PiAi.Model<PiAi.Api>>(),
    );
  });
});

describe("transcripts cross both ways", () => {
  it("our messages are pi's (a pi-typed transcript holds what a run produced)", () => {
    compiles(
      accepts<Pi.AgentMessage>()<AgentMessage>(),
      accepts<PiAi.Message>()<Message>(),
      accepts<PiAi.AssistantMessage>()<AssistantMessage>(),
      accepts<PiAi.ToolCall>()<ToolCall>(),
      accepts<PiAi.ToolResultMessage>()<ToolResultMessage>(),
      accepts<PiAi.AssistantMessageEvent>()<AssistantMessageEvent>(),
    );
  });

  it("pi's messages are ours (a pi transcript starts an Agent or a loop)", () => {
    compiles(
      accepts<AgentMessage>()<Pi.AgentMessage>(),
      accepts<AssistantMessage>()<PiAi.AssistantMessage>(),
      accepts<ToolCall>()<PiAi.ToolCall>(),
      accepts<ToolResultMessage>()<PiAi.ToolResultMessage>(),
    );
  });
});

describe("what stays refused (each line fails to compile without its @ts-expect-error)", () => {
  it("arguments that are not JSON, an unknown stop reason, a tool without execute, a listener for a non-event", () => {
    // @ts-expect-error a tool call's arguments are JSON (pi-ai's JsonObject): no functions
    const call: ToolCall = { type: "toolCall", id: "c", name: "t", arguments: { run: () => 1 } };
    // @ts-expect-error "paused" is no StopReason
    const stopped: AssistantMessage["stopReason"] = "paused";
    // @ts-expect-error a tool runs something
    const tool: AgentTool = { name: "t", label: "t", description: "d", parameters: { type: "object" } };
    // @ts-expect-error a listener takes events, not strings
    const listener: AgentListener = (event: string) => void event;
    expect([call, stopped, tool, listener].length).toBe(4);
  });
});

describe("pi-typed code runs unchanged", () => {
  it("a pi tool, pi hooks and a pi listener drive an Agent; its transcript is a pi transcript", async () => {
    const read: Pi.AgentTool<{ type: "object"; properties: { path: { type: "string" } } }, { bytes: number }> = {
      name: "read",
      label: "Read",
      description: "Reads a file",
      parameters: { type: "object", properties: { path: { type: "string" } } },
      execute: async () => ({ content: [{ type: "text", text: "contents" }], details: { bytes: 8 } }),
    };
    const beforeToolCall: Pi.AgentLoopConfig["beforeToolCall"] = async ({ toolCall }) => (toolCall.name === "read" ? undefined : { block: true });
    const afterToolCall: Pi.AgentLoopConfig["afterToolCall"] = async ({ result }) => ({ details: { seen: result.details !== undefined } });
    const seen: string[] = [];
    const listener = (event: Pi.AgentEvent): void => {
      if (event.type === "message_end") seen.push(event.message.role);
    };

    const agent = new Agent({
      streamFn: scriptedStreamFn([{ content: [toolCall("read", { path: "a" }, "t1")] }, { content: [text("done")] }]),
      initialState: { model: scriptedModel, tools: [read] },
      beforeToolCall,
      afterToolCall,
    });
    agent.subscribe(listener);
    await agent.prompt("go");

    const transcript: Pi.AgentMessage[] = agent.state.messages;
    const result = transcript.find((message) => message.role === "toolResult");
    expect(result?.role === "toolResult" && result.details).toEqual({ seen: true });
    expect(seen).toEqual(["user", "assistant", "toolResult", "assistant"]);
    // The leading system message declares the tool (R30).
    expect(transcript.map((message) => message.role)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);

    const piEvents: Pi.AgentEvent[] = [];
    const config: Pi.AgentLoopConfig = { model: { ...scriptedModel, baseUrl: "http://offline.invalid" }, convertToLlm: (messages) => messages, beforeToolCall };
    const sink: Pi.AgentEventSink = (event) => void piEvents.push(event);
    await runAgentLoop([{ role: "user", content: "again", timestamp: 1 }], { messages: transcript, tools: [read] }, config, sink, undefined, scriptedStreamFn([{ content: [text("ok")] }]));
    expect(piEvents.filter((event) => event.type !== "message_update").map((event) => event.type)).toEqual(["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end", "turn_end", "agent_end"]);
  });
});
