/**
 * Shape checks of content blocks (SPEC "Data model"): text, image, thinking and tool-call blocks,
 * read defensively (a block may be a Proxy or have throwing getters). Pure; they return the first
 * problem found instead of throwing, so each caller raises its own typed error.
 */
import { describeValue, isArray, isRecord, readField } from "./describe-value.js";
import { fieldPath, type Problem } from "./problem.js";

export type BlockType = "text" | "image" | "thinking" | "toolCall";

/** Arrays longer than this are refused: no transcript needs a million blocks in one message. */
export const MAX_BLOCKS = 10_000;

/** The first problem of `value[key]` not being of `type` (`optional`: may be absent). */
export function fieldProblem(value: unknown, key: string, path: string, type: "string" | "boolean" | "number" | "object", optional = false): Problem | undefined {
  const read = readField(value, key);
  // The field's path is built only for a problem: most checks find none (a run checks its model and prompts).
  if ("threw" in read) return { field: fieldPath(path, key), problem: "could not be read (its getter threw)" };
  const item = read.value;
  if (item === undefined && optional) return undefined;
  const ok = type === "object" ? isRecord(item) : type === "number" ? typeof item === "number" && Number.isFinite(item) : typeof item === type;
  if (ok) return undefined;
  const expected = type === "object" ? "an object" : type === "number" ? "a finite number" : `a ${type}`;
  return { field: fieldPath(path, key), problem: `must be ${expected}, got ${describeValue(item)}` };
}

/** The first problem of one content block among `allowed` types. */
export function blockProblem(block: unknown, path: string, allowed: readonly BlockType[]): Problem | undefined {
  if (!isRecord(block)) return { field: path, problem: `must be a content block object, got ${describeValue(block)}` };
  const type = readField(block, "type");
  if ("threw" in type) return { field: fieldPath(path, "type"), problem: "could not be read (its getter threw)" };
  if (typeof type.value !== "string" || !(allowed as readonly string[]).includes(type.value)) {
    return { field: fieldPath(path, "type"), problem: `must be ${allowed.map((t) => `"${t}"`).join(" or ")}, got ${describeValue(type.value)}` };
  }
  switch (type.value as BlockType) {
    case "text":
      return fieldProblem(block, "text", path, "string") ?? fieldProblem(block, "textSignature", path, "string", true);
    case "image":
      return fieldProblem(block, "data", path, "string") ?? fieldProblem(block, "mimeType", path, "string");
    case "thinking":
      return fieldProblem(block, "thinking", path, "string") ?? fieldProblem(block, "thinkingSignature", path, "string", true);
    case "toolCall":
      return fieldProblem(block, "id", path, "string") ?? fieldProblem(block, "name", path, "string") ?? fieldProblem(block, "arguments", path, "object");
  }
}

/** The first problem of a content array whose blocks must be of the `allowed` types. */
export function blocksProblem(value: unknown, path: string, allowed: readonly BlockType[]): Problem | undefined {
  if (!isArray(value)) return { field: path, problem: `must be an array of content blocks, got ${describeValue(value)}` };
  if (value.length > MAX_BLOCKS) return { field: path, problem: `must hold at most ${MAX_BLOCKS} blocks, got ${value.length}` };
  for (let i = 0; i < value.length; i++) {
    const read = readField(value, i);
    if ("threw" in read) return { field: fieldPath(path, i), problem: "could not be read" };
    const problem = blockProblem(read.value, fieldPath(path, i), allowed);
    if (problem) return problem;
  }
  return undefined;
}

/** Text, or an array of blocks (`UserMessage.content`, `SystemMessage.content`). */
export function textOrBlocksProblem(value: unknown, path: string, allowed: readonly BlockType[]): Problem | undefined {
  if (typeof value === "string") return undefined;
  if (!isArray(value)) return { field: path, problem: `must be a string or an array of content blocks, got ${describeValue(value)}` };
  return blocksProblem(value, path, allowed);
}
