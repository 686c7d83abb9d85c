/**
 * The web chat: an `Agent` from xstate-agent-loop running in the page. The transcript is drawn
 * from the Agent's events; the side panel subscribes to the actors themselves.
 */
import { Agent, isRuntimeEvent, proxyStreamFn, scriptedModel, summarizingCompactor, type AgentEvent, type AgentLoopConfig, type AnyAgentEvent, type Model, type UserMessage } from "xstate-agent-loop";
import { demoHooks, demoStreamFn, demoTools, SYSTEM_PROMPT } from "./scenario.js";
import { TranscriptView, type UserMessageKind } from "./transcript.js";
import { mountMachinePanel } from "./machine-panel.js";
import { InspectorSwitch } from "./inspector.js";
import "./style.css";

const byId = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

/** What the example server runs (GET /api/config); a plain static host means the scripted model. */
type ServerConfig = { provider: "scripted" } | { provider: "anthropic"; model: Model; proxyToken: string };

async function serverConfig(): Promise<ServerConfig> {
  try {
    const response = await fetch("./api/config");
    if (response.ok) return (await response.json()) as ServerConfig;
  } catch {
    // Not served by scripts/example-web.ts.
  }
  return { provider: "scripted" };
}

const config = await serverConfig();
const inspection = new InspectorSwitch();

// --- The Agent: this is all an app needs --------------------------------------------------------
// Recovery, on as in the terminal agent: retry overloads, rate limits, 5xx and dropped connections
// (SPEC R60), recover answers cut off by the output limit (R61), summarize older turns with the
// model when the conversation outgrows the context window (R62; not proactively, which would spend
// model calls before it is needed), and give up on a tool or hook that ignores an abort after 5 s (R67).
const recovery: Pick<AgentLoopConfig, "retry" | "outputLimit" | "compact" | "abortGraceMs"> = {
  retry: {},
  outputLimit: {},
  compact: { compactor: summarizingCompactor() },
  abortGraceMs: 5000,
};
const agent = new Agent({
  initialState: { systemPrompt: SYSTEM_PROMPT, model: config.provider === "anthropic" ? config.model : scriptedModel, tools: demoTools },
  // Claude through the local proxy (the key stays on the server), or the offline scenario.
  // pi's stream proxy protocol: `streamProxy` posts to <proxyUrl>/api/stream with the server's token.
  streamFn:
    config.provider === "anthropic" ? proxyStreamFn({ proxyUrl: new URL(".", location.href).href, authToken: config.proxyToken }) : demoStreamFn(),
  ...demoHooks,
  ...recovery,
  // SPEC R70: the lookups start as soon as their calls are complete, while the model goes on
  // (open the page with ?streamingTools=off for pi's behaviour: tools after the answer).
  streamingToolExecution: new URLSearchParams(location.search).get("streamingTools") !== "off",
  inspect: inspection.observe,
});

// --- Transcript (events) ------------------------------------------------------------------------
const kinds = new WeakMap<object, UserMessageKind>();
const transcript = new TranscriptView(byId<HTMLOListElement>("transcript"), kinds);
transcript.restore(agent.state.messages);
let eventCount = 0;
agent.subscribe(
  (event: AnyAgentEvent) => {
    if (isRuntimeEvent(event)) return transcript.handleRuntime(event);
    onAgentEvent(event);
  },
  { runtimeEvents: true },
);
function onAgentEvent(event: AgentEvent): void {
  transcript.handle(event);
  eventCount++;
  document.body.dataset.events = String(eventCount);
  document.body.dataset.lastEvent = event.type;
  byId("last-event").textContent = `${event.type} (#${eventCount})`;
}

// --- Live actors (snapshots) --------------------------------------------------------------------
mountMachinePanel(agent.actor, {
  session: byId("session-state"),
  run: byId("run-state"),
  trail: byId<HTMLOListElement>("run-trail"),
  tools: byId<HTMLUListElement>("tool-actors"),
  steering: byId<HTMLOListElement>("queue-steering"),
  followUp: byId<HTMLOListElement>("queue-follow-up"),
});

// --- Composer -----------------------------------------------------------------------------------
const input = byId<HTMLTextAreaElement>("message");
const buttons = {
  send: byId<HTMLButtonElement>("send"),
  steer: byId<HTMLButtonElement>("steer"),
  followUp: byId<HTMLButtonElement>("follow-up"),
  abort: byId<HTMLButtonElement>("abort"),
};

const isBusy = () => !agent.actor.getSnapshot().matches("idle");

/** The text box's message, remembered as `kind` for the transcript; undefined when empty. */
function take(kind: UserMessageKind): UserMessage | undefined {
  const text = input.value.trim();
  if (text === "") return undefined;
  input.value = "";
  const message: UserMessage = { role: "user", content: text, timestamp: Date.now() };
  kinds.set(message, kind);
  return message;
}

const actions = {
  send() {
    if (isBusy()) return;
    const message = take("prompt");
    if (message) agent.prompt(message).catch((error: unknown) => transcript.note(`prompt failed: ${error instanceof Error ? error.message : String(error)}`));
  },
  steer() {
    const message = take("steering");
    if (message) agent.steer(message);
  },
  followUp() {
    const message = take("follow-up");
    if (message) agent.followUp(message);
  },
  abort() {
    agent.abort();
  },
};

byId<HTMLFormElement>("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  actions.send();
});
buttons.steer.addEventListener("click", actions.steer);
buttons.followUp.addEventListener("click", actions.followUp);
buttons.abort.addEventListener("click", actions.abort);
input.addEventListener("keydown", (event) => {
  if (event.key !== "Enter" || event.shiftKey) return;
  event.preventDefault();
  if (isBusy()) actions.steer();
  else actions.send();
});

const updateButtons = () => {
  const busy = isBusy();
  buttons.send.disabled = busy;
  buttons.steer.disabled = !busy;
  buttons.followUp.disabled = !busy;
  buttons.abort.disabled = !busy;
  document.body.dataset.busy = String(busy);
};
agent.actor.subscribe(updateButtons);
updateButtons();

// --- Header -------------------------------------------------------------------------------------
byId("model-label").textContent = config.provider === "anthropic" ? `${config.model.id} via the local proxy` : "scripted model (offline)";
const toggle = byId<HTMLInputElement>("inspector-toggle");
const pane = byId("inspector-pane");
toggle.addEventListener("change", () => (toggle.checked ? inspection.connect(agent.actor, pane) : inspection.disconnect(pane)));

// For the devtools console.
Object.assign(globalThis, { webChat: { agent, transcript, recovery } });
document.body.dataset.ready = "true";
input.focus();
