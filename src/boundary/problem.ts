/** What a shape check found wrong: the field path and what is wrong with it. */
export interface Problem {
  /** `content[0].text`, `messages[2]`, or `""` for the value itself. */
  readonly field: string;
  /** `must be a string, got a number (42)`. */
  readonly problem: string;
}

/** `base` extended by a key or an index: `content` + 0 → `content[0]`, `x` + `text` → `x.text`. */
export function fieldPath(base: string, key: string | number): string {
  if (typeof key === "number") return `${base}[${key}]`;
  return base === "" ? key : `${base}.${key}`;
}

/** `field must …` (or just `must …` for the value itself). */
export function problemText(problem: Problem, subject = "value"): string {
  return `${problem.field === "" ? subject : problem.field} ${problem.problem}`;
}
