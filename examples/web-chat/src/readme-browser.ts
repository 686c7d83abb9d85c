/**
 * docs/guides/embedding.md's browser snippet, verbatim: type-checked with the example
 * (`tsc -p examples/web-chat/tsconfig.json`, run by test/web/web-chat.test.ts), not part of the page.
 */
import { Agent, proxyStreamFn, type Model } from "xstate-agent-loop";
import { connectBrowserInspector } from "xstate-agent-loop/inspect";

// Plain data from your server: the model descriptor and a token for its stream proxy.
const { model, proxyToken }: { model: Model; proxyToken: string } = await (await fetch("/api/config")).json();
const agent = new Agent({
  // pi's stream proxy protocol (`streamProxy`): POST /api/stream; the server holds the API key.
  streamFn: proxyStreamFn({ proxyUrl: location.origin, authToken: proxyToken }),
  initialState: { systemPrompt: "You are a helpful assistant.", model },
  inspect: connectBrowserInspector(), // optional: the Stately inspector, in a new window
});

const answer = document.querySelector("#answer")!;
agent.subscribe((event) => {
  if (event.type === "message_update" && event.message.role === "assistant") {
    answer.textContent = event.message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
  }
});
const where = document.querySelector("#where")!;
agent.actor.subscribe((session) => (where.textContent = JSON.stringify(session.value))); // "idle" or {"busy":…}

const input = document.querySelector("input")!;
document.querySelector("form")!.addEventListener("submit", (event) => {
  event.preventDefault();
  if (agent.state.isStreaming) agent.steer({ role: "user", content: input.value, timestamp: Date.now() });
  else void agent.prompt(input.value);
});
document.querySelector("#stop")!.addEventListener("click", () => agent.abort());
