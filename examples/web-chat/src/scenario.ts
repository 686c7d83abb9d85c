/**
 * The demo: three tools, the hooks, and a scripted model that plays a small scenario offline.
 *
 * "Plan a weekend in Lisbon" asks for three tools in one response: `get_weather` and
 * `find_places` run in parallel and report progress, `book_table` is blocked by `beforeToolCall`.
 * The next request answers the results and any steering that arrived meanwhile; a queued
 * follow-up gets its own turn when the agent would otherwise stop. Every turn after the first
 * starts with a slow `prepareNextTurn` (400 ms, standing in for context compaction): the run sits
 * in `turn.preparingNextTurn` and emits no event, which only the actor panel can show.
 * "Tell me a long story" streams slowly, to try the abort button on.
 */
import { defineTool, scriptedStreamFn, text, toolCall, type AgentHooks, type AgentTool, type Message, type ScriptedResponse } from "xstate-agent-loop";
import { z } from "zod";

// zod's JIT probes `Function("")`, which the page's Content Security Policy forbids (Chrome
// reports it as a console error); jitless mode skips the probe. Set before any schema is used.
z.config({ jitless: true });

export const SYSTEM_PROMPT = "You are a travel assistant in a browser demo. Use the tools when they help; keep answers short.";

/** How long `prepareNextTurn` takes. */
export const PREPARE_NEXT_TURN_MS = 400;
/** One progress step of a tool. */
const STEP_MS = 500;

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** Reports `steps` progress updates, one every STEP_MS; throws when aborted (an error result). */
async function work(steps: string[], signal: AbortSignal | undefined, onUpdate: ((partial: { content: { type: "text"; text: string }[]; details: { progress: number } }) => void) | undefined) {
  for (let i = 0; i < steps.length; i++) {
    onUpdate?.({ content: [{ type: "text", text: steps[i] }], details: { progress: i / steps.length } });
    await sleep(STEP_MS, signal);
    if (signal?.aborted) throw new Error("Aborted");
  }
}

/** SPEC R70: a lookup may start while the model still streams (the page runs in streaming mode). */
const safe = (tool: AgentTool): AgentTool => ({ ...tool, isConcurrencySafe: () => true });

export const demoTools: AgentTool[] = [
  safe(defineTool({
    name: "get_weather",
    label: "Weather",
    description: "The weather forecast for a city this weekend.",
    parameters: z.object({ city: z.string().describe("City name") }),
    execute: async (_id, { city }, signal, onUpdate) => {
      await work([`Contacting the station in ${city}…`, "Reading Saturday…", "Reading Sunday…", "Averaging…"], signal, onUpdate);
      return { content: [{ type: "text", text: `${city}: sunny on Saturday (24 °C), light showers on Sunday (19 °C).` }], details: { progress: 1 } };
    },
  })),
  safe(defineTool({
    name: "find_places",
    label: "Places",
    description: "Places of a kind (museums, restaurants, viewpoints) in a city.",
    parameters: z.object({ city: z.string(), kind: z.string() }),
    execute: async (_id, { city, kind }, signal, onUpdate) => {
      await work([`Searching ${kind} in ${city}…`, "Ranking…", "Checking opening hours…"], signal, onUpdate);
      return { content: [{ type: "text", text: "Gulbenkian Museum, MAAT, National Tile Museum (all open Saturday)." }], details: { progress: 1 } };
    },
  })),
  defineTool({
    name: "book_table",
    label: "Booking",
    description: "Books a restaurant table.",
    parameters: z.object({ restaurant: z.string(), time: z.string() }),
    execute: async (_id, { restaurant, time }) => ({ content: [{ type: "text", text: `Booked ${restaurant} at ${time}.` }], details: {} }),
  }),
];

/** The Agent's hooks for the demo (the same with Claude). */
export const demoHooks: Pick<AgentHooks, "beforeToolCall" | "prepareNextTurn"> = {
  // Side effects need the user's consent: this demo never grants it.
  beforeToolCall: async ({ toolCall: call }) =>
    call.name === "book_table" ? { block: true, reason: "Booking needs your confirmation, so beforeToolCall blocked it." } : undefined,
  prepareNextTurn: async (signal) => {
    await sleep(PREPARE_NEXT_TURN_MS, signal);
    return undefined;
  },
};

const textOf = (message: Message): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.map((block) => (block.type === "text" ? block.text : "")).join("");

const STORY =
  "Once upon a time, a statechart lived in a browser tab. Every time someone typed a question it woke up, " +
  "walked from preparingTurn to requesting, streamed its answer word by word, and spawned little tool actors " +
  "that ran side by side and reported back to their parent. Nobody had to guess what it was doing: every state " +
  "had a name, every transition a reason, and when the user pressed abort it wound down politely, closed its " +
  "turn and went back to idle, ready for the next question. The end.";

/** What the scripted model answers: it looks at what came after its last message. */
export function respond(messages: Message[]): ScriptedResponse {
  const lastAssistant = messages.map((message) => message.role).lastIndexOf("assistant");
  const tail = messages.slice(lastAssistant + 1);
  const results = tail.filter((message) => message.role === "toolResult");
  const said = tail.filter((message) => message.role === "user").map(textOf);

  if (said.some((line) => /long|story/i.test(line))) return { content: [text(STORY)], delayMs: 70 };
  if (results.length === 0 && said.some((line) => /plan|trip|weekend|lisbon/i.test(line))) {
    return {
      content: [
        text("I'll check the weather and find museums in parallel, and try to book a table for dinner."),
        toolCall("get_weather", { city: "Lisbon" }),
        toolCall("find_places", { city: "Lisbon", kind: "museums" }),
        toolCall("book_table", { restaurant: "Taberna da Rua das Flores", time: "20:00" }),
      ],
      delayMs: 30,
    };
  }
  const lines: string[] = [];
  for (const result of results) {
    if (result.role !== "toolResult") continue;
    lines.push(result.isError ? `${result.toolName} did not run: ${textOf(result)}` : `${result.toolName}: ${textOf(result)}`);
  }
  for (const line of said) lines.push(`You said: “${line}” — noted.`);
  if (results.length > 0) lines.push("Plan: museums on Saturday while it is sunny, tiles on Sunday.");
  if (lines.length === 0) lines.push("I am the scripted demo model; start the example with --anthropic to talk to Claude.");
  return { content: [text(lines.join("\n"))], delayMs: 20 };
}

/** The offline model: plays `respond` for every request. */
export const demoStreamFn = () => scriptedStreamFn((call) => respond(call.context.messages));
