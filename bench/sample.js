// What the interleaved benches do between timed samples (bench/README.md, "bench:peers' stream row"
// and "bench:floor's harness"): shared so every side of a comparison is treated alike.

/**
 * Before each timed sample: one macrotask turn, so what the sample before left queued runs off this
 * one's clock, then a scavenge (under --expose-gc; nothing without it), so the young garbage of the
 * sample before is not collected on this one's clock. Not a full collection: that also clears what
 * optimized code holds weakly (the objects and maps of the runs that just ended) and deoptimizes
 * every side's hot functions ("embedded weak objects cleared"), so each sample would time their
 * re-optimization. A full `gc()` belongs once before a scenario's warm-up, which re-optimizes.
 */
export async function beforeSample() {
  await new Promise((resolve) => setImmediate(resolve));
  global.gc?.({ type: "minor" });
}

/**
 * The orders of n sides for successive rounds: the rows of a Williams design (a balanced Latin
 * square), so that over a whole design every side runs in every position equally often and right
 * after every other side equally often (n rows for n sides, 2n when n is odd). A side's time
 * depends on the one before it (caches it left warm or cold, its garbage). For two sides: AB, BA.
 */
export function williams(n) {
  const first = [];
  for (let i = 0, low = 0, high = n - 1; i < n; i++) first.push(i % 2 === 0 ? low++ : high--);
  const rows = [];
  for (let r = 0; r < n; r++) rows.push(first.map((c) => (c + r) % n));
  if (n % 2 === 1) for (let r = 0; r < n; r++) rows.push([...rows[r]].reverse());
  return rows;
}

/** At least `rounds` rounds, in whole designs, so the balance holds. */
export const wholeDesigns = (rounds, design) => Math.ceil(rounds / design.length) * design.length;

/** The median of some numbers (the upper one of the middle two for an even count, as every bench reads it). */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
