/**
 * Issue 35 item 4: `--model provider:id`. Unit tests of the choice (keys, packages, base URLs,
 * unknown models), then a one-shot session in process through `@ai-sdk/openai` against the local
 * OpenAI wire: a tool call, its result sent back, the answer printed, the key in no output or trace.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/node/cli/app.js";
import { parseCliArgs } from "../../src/node/cli/args.js";
import { chooseSessionModel, parseModelSpec } from "../../src/node/cli/provider-model.js";
import { OFFLINE_LABEL } from "../../src/node/cli/model.js";
import { sseFrames, startWireServer, type WireServer } from "../support/wire-server.js";
import { openaiChatWire, openaiResponsesWire, WIRE_API_KEY } from "../ai-sdk/wires.js";
import { checkTrace, fakeIO, makeRepo } from "./fixture.js";

describe("--model provider:id", () => {
  it("parses provider:id; a bare id is Claude's; an unknown provider or a missing id is an error", () => {
    expect(parseModelSpec("claude-sonnet-4-5")).toEqual({ provider: "anthropic", id: "claude-sonnet-4-5" });
    expect(parseModelSpec("openai:gpt-5")).toEqual({ provider: "openai", id: "gpt-5" });
    expect(parseModelSpec("ollama:llama3.2:3b")).toEqual({ provider: "ollama", id: "llama3.2:3b" });
    expect(parseModelSpec("mistral:large")).toEqual({
      error: 'Unknown provider "mistral" in --model mistral:large (one of: anthropic, openai, openai-chat, ollama, google; a bare id is a Claude model).',
    });
    expect(parseModelSpec("openai:")).toEqual({ error: "--model openai: names no model id (e.g. openai:<id>)." });
  });

  it("--base-url is an option with a value", () => {
    const parsed = parseCliArgs(["--model", "openai:gpt-5", "--base-url", "http://127.0.0.1:9/v1", "hi"]);
    expect(parsed).toMatchObject({ kind: "run", options: { model: "openai:gpt-5", baseUrl: "http://127.0.0.1:9/v1", prompt: "hi" } });
    expect(parseCliArgs(["--base-url"])).toEqual({ kind: "error", message: "Option --base-url needs a value." });
  });

  it("without --model and without keys: the offline demo model, unchanged", async () => {
    const choice = await chooseSessionModel({ offline: false }, {});
    expect(choice).toMatchObject({ offline: true, label: OFFLINE_LABEL });
  });

  it("a missing key is one line naming the variable", async () => {
    expect(await chooseSessionModel({ offline: false, model: "openai:gpt-5" }, {})).toEqual({ error: "--model openai:gpt-5 needs OPENAI_API_KEY in the environment." });
    expect(await chooseSessionModel({ offline: false, model: "google:gemini-2.5-flash" }, {})).toEqual({
      error: "--model google:gemini-2.5-flash needs GOOGLE_GENERATIVE_AI_API_KEY in the environment.",
    });
    expect(await chooseSessionModel({ offline: false, model: "anthropic:claude-haiku-4-5" }, {})).toEqual({
      error: "--model anthropic:claude-haiku-4-5 needs ANTHROPIC_API_KEY in the environment.",
    });
  });

  it("a provider package that is not installed is one line saying what to install", async () => {
    const missing = async (name: string): Promise<Record<string, unknown>> => {
      throw Object.assign(new Error(`Cannot find package '${name}'`), { code: "ERR_MODULE_NOT_FOUND" });
    };
    expect(await chooseSessionModel({ offline: false, model: "openai:gpt-5" }, { OPENAI_API_KEY: "k" }, 1, missing)).toEqual({
      error: "--model openai:gpt-5 needs the package @ai-sdk/openai: npm install @ai-sdk/openai",
    });
    expect(await chooseSessionModel({ offline: false, model: "google:gemini-2.5-flash" }, { GOOGLE_GENERATIVE_AI_API_KEY: "k" }, 1, missing)).toEqual({
      error: "--model google:gemini-2.5-flash needs the package @ai-sdk/google: npm install @ai-sdk/google",
    });
  });

  it("known models get the table's facts; Ollama needs no key and an unknown local model gets assumed limits, said in a warning", async () => {
    const openai = await chooseSessionModel({ offline: false, model: "openai:gpt-5" }, { OPENAI_API_KEY: "k" });
    expect(openai).toMatchObject({ offline: false, label: "GPT-5 (gpt-5) via OpenAI Responses API", model: { id: "gpt-5", contextWindow: 400_000, maxTokens: 128_000 } });
    expect(openai).not.toHaveProperty("warning");
    const ollama = await chooseSessionModel({ offline: false, model: "ollama:llama3.2" }, {});
    expect(ollama).toMatchObject({
      label: "llama3.2 via Ollama at http://localhost:11434/v1",
      model: { id: "llama3.2", contextWindow: 128_000, maxTokens: 8_192, cost: { input: 0, output: 0 } },
      warning: 'Model "llama3.2" is not in the facts table: assuming a 128000-token context window, 8192 output tokens, no cost.',
    });
    const compatible = await chooseSessionModel({ offline: false, model: "openai-chat:qwen3", baseUrl: "http://127.0.0.1:1/v1" }, { OPENAI_API_KEY: "k" });
    expect(compatible).toMatchObject({ label: "qwen3 via OpenAI Chat Completions at http://127.0.0.1:1/v1" });
    const fromEnv = await chooseSessionModel({ offline: false, model: "openai:gpt-5" }, { OPENAI_API_KEY: "k", OPENAI_BASE_URL: "http://proxy.test/v1" });
    expect(fromEnv).toMatchObject({ label: "GPT-5 (gpt-5) via OpenAI Responses API at http://proxy.test/v1" });
  });

  it("runCli: a missing key exits 2 with the one line, before any request", async () => {
    const repo = makeRepo();
    try {
      const { io, stderr } = fakeIO(repo.root);
      expect(await runCli(["--no-save", "--model", "openai:gpt-5", "hello"], io)).toBe(2);
      expect(stderr()).toBe("error: --model openai:gpt-5 needs OPENAI_API_KEY in the environment.\n");
    } finally {
      repo.cleanup();
    }
  });
});

describe("a one-shot session through @ai-sdk/openai against the local OpenAI wire", () => {
  let server: WireServer;
  let traceDir: string;
  beforeAll(async () => {
    server = await startWireServer();
    traceDir = mkdtempSync(path.join(tmpdir(), "xal-provider-trace-"));
  });
  afterAll(async () => {
    await server.close();
    rmSync(traceDir, { recursive: true, force: true });
  });

  it.each([
    ["openai", openaiResponsesWire, "gpt-5-mini"],
    ["openai-chat", openaiChatWire, "gpt-4o-mini"],
  ] as const)("%s: read_file runs, its result goes back, the answer is printed; the key is nowhere in the output or the trace", async (provider, wire, id) => {
    server.clear();
    server.script(
      sseFrames(wire.toolCalls([{ id: "call_r1", name: "read_file", chunks: ['{"path":', '"README.md"}'] }])),
      sseFrames(wire.text(["The README says: ", "A tiny repository."])),
    );
    const repo = makeRepo();
    const tracePath = path.join(traceDir, `${provider}.jsonl`);
    try {
      const { io, stdout, stderr } = fakeIO(repo.root, { env: { OPENAI_API_KEY: WIRE_API_KEY, OPENAI_BASE_URL: `${server.url}/v1` } });
      const code = await runCli(["--no-save", "--trace", tracePath, "--model", `${provider}:${id}`, "what does the README say?"], io);
      expect(stderr()).toBe("");
      expect(code).toBe(0);
      expect(stdout()).toContain("The README says: A tiny repository.");
      expect(stdout()).toContain("read_file");
      expect(server.requests).toHaveLength(2);
      expect(server.requests[1].rawBody).toContain("A tiny repository.");
      const trace = readFileSync(tracePath, "utf8");
      checkTrace(trace);
      expect(trace).not.toContain(WIRE_API_KEY);
      expect(stdout()).not.toContain(WIRE_API_KEY);
    } finally {
      repo.cleanup();
    }
  });
});
