/**
 * The second restore scenario (SPEC R13): the run states scenario A does not visit — a truncated
 * response with a call (R28), a `finishTurn` that asks to continue (R10, R11), `prepareNextTurn`
 * adding messages and steering polled again (R4a), follow-ups polled with none (R10), and a hook
 * that throws (R56). The world (what the app's hooks decided so far) is plain data, saved next to
 * each snapshot.
 */
import type { AgentLoopConfig, AgentMessage, AgentTool, ScriptedResponse } from "../../src/index.js";
import { defaultConvertToLlm, scriptedModel, scriptedStreamFn, text, toolCall } from "../../src/index.js";
import type { AgentRunOptions } from "../../src/actors/run-runtime.js";
import { fixedClock, userMessage, type World } from "./scenario.js";

const responses: ScriptedResponse[] = [
  // R28: truncated with a call: the call gets the not-executed result.
  { content: [text("Let me"), toolCall("look", { at: "x" }, "t1")], stopReason: "length" },
  { content: [text("Here is the answer.")] },
  { content: [text("And one more thought.")] },
  { content: [text("Never reached.")] },
];

export function scenarioBOptions(world: World): AgentRunOptions {
  const look: AgentTool = {
    name: "look",
    label: "look",
    description: "look",
    parameters: { type: "object", properties: { at: { type: "string" } } },
    execute: async () => ({ content: [{ type: "text", text: "seen" }], details: {} }),
  };
  const config: AgentLoopConfig = {
    model: scriptedModel,
    convertToLlm: defaultConvertToLlm,
    getSteeringMessages: async () => [],
    getFollowUpMessages: async () => [],
    // R10, R11: once, after the second turn, ask for exactly one more request.
    finishTurn: async ({ message }) => {
      if (world.steered || message.stopReason === "length") return undefined;
      world.steered = true;
      return { action: "continue" };
    },
    // R4a: before the third request, a note for the model.
    prepareNextTurn: async ({ message }) => (message.stopReason === "length" ? undefined : { messages: [userMessage("Think once more.")] }),
    // R56: the fourth request's preparation fails.
    prepareRequest: async ({ context }) => {
      if (context.messages.filter((entry: AgentMessage) => (entry as { role: string }).role === "assistant").length >= 3) throw new Error("quota exceeded");
      return undefined;
    },
  };
  const streamFn = scriptedStreamFn((request) => {
    const answered = request.context.messages.filter((message) => message.role === "assistant").length;
    return responses[Math.min(answered, responses.length - 1)];
  });
  return { streamFn, tools: [look], config, clock: fixedClock };
}
