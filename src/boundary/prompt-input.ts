/** `Agent.prompt()`'s argument: text (with images), one message, or several (R52). */
import { blocksProblem } from "./content.js";
import { describeValue, isArray } from "./describe-value.js";
import { AgentInputError } from "./errors.js";
import { checkMessage, checkMessages } from "./messages.js";
import { problemText } from "./problem.js";

export function checkPromptInput(input: unknown, images: unknown): void {
  if (typeof input === "string") {
    if (images === undefined) return;
    const problem = blocksProblem(images, "images", ["image"]);
    if (problem) throw new AgentInputError(problem.field, problemText(problem));
    return;
  }
  if (isArray(input)) checkMessages(input, "prompt");
  else if (typeof input === "object" && input !== null) checkMessage(input, "prompt");
  else throw new AgentInputError("prompt", `prompt must be text, a message or an array of messages, got ${describeValue(input)}`);
}
