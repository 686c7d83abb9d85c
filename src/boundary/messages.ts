/**
 * Checks of the messages apps and hooks hand to the loop: prompts, `steer`/`followUp`, what
 * `getSteeringMessages`/`getFollowUpMessages` resolve, a hook's `messages`. The four provider
 * roles are checked field by field (what a provider reads); any other string `role` is an
 * app-defined message (`CustomAgentMessages`) and passes as it is.
 */
import type { AgentMessage } from "../types.js";
import { blocksProblem, fieldProblem, textOrBlocksProblem } from "./content.js";
import { describeValue, isArray, isRecord, readField } from "./describe-value.js";
import { AgentInputError } from "./errors.js";
import { fieldPath, problemText, type Problem } from "./problem.js";

/**
 * Messages already found well-formed. A transcript passes the loop's boundary on every run; each
 * message is checked once, so a run costs what its new messages cost, not its transcript's length.
 * (A message mutated after it was checked is the app's to keep well-formed.)
 */
const wellFormed = new WeakSet<object>();

/** The first problem of one message, or undefined when it is a well-formed `AgentMessage`. */
export function messageProblem(value: unknown, path = ""): Problem | undefined {
  if (!isRecord(value)) return { field: path, problem: `must be a message object with a role, got ${describeValue(value)}` };
  if (wellFormed.has(value)) return undefined;
  const problem = firstProblem(value, path);
  if (!problem) wellFormed.add(value);
  return problem;
}

function firstProblem(value: Record<string, unknown>, path: string): Problem | undefined {
  const role = readField(value, "role");
  if ("threw" in role) return { field: fieldPath(path, "role"), problem: "could not be read (its getter threw)" };
  if (typeof role.value !== "string" || role.value === "") {
    return { field: fieldPath(path, "role"), problem: `must be a non-empty string, got ${describeValue(role.value)}` };
  }
  const content = () => {
    const read = readField(value, "content");
    return "threw" in read ? Symbol.for("unreadable") : read.value;
  };
  const contentPath = fieldPath(path, "content");
  switch (role.value) {
    case "user":
      return textOrBlocksProblem(content(), contentPath, ["text", "image"]);
    case "system":
      return textOrBlocksProblem(content(), contentPath, ["text"]);
    case "assistant":
      return blocksProblem(content(), contentPath, ["text", "thinking", "toolCall"]);
    case "toolResult":
      return (
        fieldProblem(value, "toolCallId", path, "string") ??
        fieldProblem(value, "toolName", path, "string") ??
        blocksProblem(content(), contentPath, ["text", "image"]) ??
        fieldProblem(value, "isError", path, "boolean", true)
      );
    default:
      return undefined;
  }
}

/** The first problem of a message list. */
export function messagesProblem(value: unknown, path = ""): Problem | undefined {
  if (!isArray(value)) return { field: path, problem: `must be an array of messages, got ${describeValue(value)}` };
  for (let i = 0; i < value.length; i++) {
    let item: unknown;
    try {
      item = value[i];
    } catch {
      return { field: fieldPath(path, i), problem: "could not be read" };
    }
    // A message checked before costs a lookup: no path built, nothing allocated (a transcript
    // passes here on every run).
    if (typeof item === "object" && item !== null && wellFormed.has(item)) continue;
    const problem = messageProblem(item, fieldPath(path, i));
    if (problem) return problem;
  }
  return undefined;
}

/** `message`, checked: throws `AgentInputError` naming `field` (e.g. `steer(message)`). */
export function checkMessage(value: unknown, field: string): AgentMessage {
  const problem = messageProblem(value, field);
  if (problem) throw new AgentInputError(problem.field, `${problemText(problem)}`);
  return value as AgentMessage;
}

/** `messages`, checked: throws `AgentInputError` naming the first bad message's field. */
export function checkMessages(value: unknown, field: string): AgentMessage[] {
  const problem = messagesProblem(value, field);
  if (problem) throw new AgentInputError(problem.field, `${problemText(problem)}`);
  return value as AgentMessage[];
}
