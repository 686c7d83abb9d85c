/**
 * Issue 16, "DEFAULT_AGENT_IDENTITY and the identity option": our own default identity, merged
 * field by field the way pi-ai merges (checked against pi-ai as a black box), sent on every
 * request, and turned into the Anthropic request's User-Agent.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mergeClientIdentity } from "@earendil-works/pi-ai";
import { DEFAULT_AGENT_IDENTITY as PI_IDENTITY } from "@earendil-works/pi-agent-core";
import { DEFAULT_AGENT_IDENTITY, formatUserAgent, mergeIdentity, type AgentLoopConfig, type ClientIdentity } from "../../src/index.js";
import { LIBRARY_VERSION, requestIdentity } from "../../src/identity/index.js";
import { LOOP_CONFIG_KEYS, streamOptionsOf } from "../../src/loop/stream-options.js";
import { anthropicModel, anthropicStreamFn } from "../../src/providers/anthropic/index.js";
import { scriptedModel } from "../../src/testing/index.js";
import { sse, startSseServer, textResponse, type SseServer } from "../support/sse-server.js";

const A: ClientIdentity = { attribution: { name: "a", url: "https://a.example" }, userAgent: "short" };
const B: ClientIdentity = { attribution: { name: "b", url: "https://b.example", categories: ["x"] } };

describe("issue 16: DEFAULT_AGENT_IDENTITY and mergeIdentity", () => {
  it("the default names this library, not pi", () => {
    expect(DEFAULT_AGENT_IDENTITY.attribution).toMatchObject({ name: "xstate-agent-loop" });
    expect(JSON.stringify(DEFAULT_AGENT_IDENTITY)).not.toMatch(/pi\.dev|"pi"/);
    expect(Object.isFrozen(DEFAULT_AGENT_IDENTITY)).toBe(true);
  });

  it("merges field by field exactly as pi-ai's mergeClientIdentity does", () => {
    const cases: (ClientIdentity | undefined)[][] = [
      [],
      [undefined, undefined],
      [A],
      [A, B],
      [B, A],
      [A, { attribution: null }],
      [A, { attribution: undefined, version: "9" }],
      [A, { userAgent: { custom: "mine/1" } }],
      [DEFAULT_AGENT_IDENTITY, undefined],
    ];
    for (const sources of cases) expect(mergeIdentity(...sources)).toEqual(mergeClientIdentity(...sources));
  });

  it("requestIdentity puts the config's identity over the default and never mutates either", () => {
    const own: ClientIdentity = { userAgent: { custom: "my-app/2" } };
    expect(requestIdentity(own)).toEqual({ ...DEFAULT_AGENT_IDENTITY, userAgent: { custom: "my-app/2" } });
    expect(requestIdentity({ attribution: null })).toEqual({ attribution: null });
    expect(requestIdentity(undefined)).toEqual(DEFAULT_AGENT_IDENTITY);
    expect(own).toEqual({ userAgent: { custom: "my-app/2" } });
  });

  it("formatUserAgent: detailed by default (library version), short, custom", () => {
    expect(LIBRARY_VERSION).toBe((JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version);
    expect(formatUserAgent(undefined)).toBe(`xstate-agent-loop/${LIBRARY_VERSION} (${process.platform}; node/${process.version}; ${process.arch})`);
    expect(formatUserAgent({ version: "9.9.9" })).toMatch(/^xstate-agent-loop\/9\.9\.9 \(/);
    expect(formatUserAgent({ userAgent: "short" })).toBe("xstate-agent-loop");
    expect(formatUserAgent({ userAgent: { custom: "me/1" } })).toBe("me/1");
  });

  it("has the shape of pi's default (an attribution), with our own values", () => {
    expect(Object.keys(DEFAULT_AGENT_IDENTITY)).toEqual(Object.keys(PI_IDENTITY));
    expect(PI_IDENTITY.attribution).toMatchObject({ name: "pi" });
  });
});

describe("issue 16: streamOptionsOf (what the request path sends)", () => {
  it("passes stream options untouched, drops loop keys, and always sends the merged identity", () => {
    const config: AgentLoopConfig = {
      model: scriptedModel,
      convertToLlm: (messages) => messages.filter((m) => m.role !== "system"),
      apiKey: "sk-never-an-option",
      reasoning: "high",
      toolExecution: "sequential",
      signal: new AbortController().signal,
      temperature: 0.3,
      cacheRetention: "long",
      headers: { "x-a": "1" },
      identity: { userAgent: "short" },
    };
    // `toolExecution` is sent as the reference sends it (its whole config reaches the stream function).
    expect(streamOptionsOf(config)).toEqual({
      toolExecution: "sequential",
      temperature: 0.3,
      cacheRetention: "long",
      headers: { "x-a": "1" },
      identity: { ...DEFAULT_AGENT_IDENTITY, userAgent: "short" },
    });
    expect(streamOptionsOf({ model: scriptedModel, convertToLlm: (m) => m.filter((x) => x.role !== "system") })).toEqual({ identity: DEFAULT_AGENT_IDENTITY });
    expect(LOOP_CONFIG_KEYS).toContain("beforeToolCall");
  });
});

describe("issue 16: the Anthropic provider honours identity and headers", () => {
  let server: SseServer;
  beforeAll(async () => {
    server = await startSseServer();
  });
  afterAll(() => server.close());

  const userAgentOf = async (options: Parameters<ReturnType<typeof anthropicStreamFn>>[2]) => {
    server.clear();
    server.script(sse(textResponse("ok")));
    const streamFn = anthropicStreamFn({ baseURL: server.url, apiKey: "sk-ant-test", maxRetries: 0 });
    const stream = streamFn(anthropicModel("claude-haiku-4-5"), { messages: [{ role: "user", content: "hi", timestamp: 1 }] }, options);
    expect((await stream.result()).stopReason).toBe("stop");
    return server.requests[0].headers;
  };

  it("User-Agent from the identity: default, short, custom; headers override it and null removes a header", async () => {
    expect((await userAgentOf({}))["user-agent"]).toBe(formatUserAgent(undefined));
    expect((await userAgentOf({ identity: { userAgent: "short" } }))["user-agent"]).toBe("xstate-agent-loop");
    expect((await userAgentOf({ identity: { userAgent: { custom: "my-app/2" } } }))["user-agent"]).toBe("my-app/2");
    expect((await userAgentOf({}))["x-stainless-lang"]).toBe("js");
    const headers = await userAgentOf({ headers: { "User-Agent": "from-headers", "x-extra": "1", "x-stainless-lang": null } });
    expect([headers["user-agent"], headers["x-extra"], headers["x-stainless-lang"]]).toEqual(["from-headers", "1", undefined]);
  });
});
