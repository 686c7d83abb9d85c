/** One `  - path: problem` line of a validation failure (R21). */
export interface FailureLine {
  /** `items.0.name`, or `root` for the arguments themselves. */
  readonly path: string;
  readonly problem: string;
}

/** Drops repeated lines (overlapping schemas report the same problem twice), keeping the first. */
export function dedupeLines(lines: readonly FailureLine[]): FailureLine[] {
  const seen = new Set<string>();
  return lines.filter((line) => {
    const key = `${line.path}\u0000${line.problem}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
