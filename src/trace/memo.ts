/**
 * The recorder's two caching habits, in one place: what a few dozen recurring strings serialize
 * to (bounded, since some keys are data), and noticing that the caller changed its `secrets`
 * array in place, after which nothing redacted before may be reused.
 */

export interface Memo<T> {
  (key: string): T;
  /** Forgets every entry (the secrets changed). */
  clear(): void;
}

/** `compute` memoized by its argument; emptied when it holds `limit` entries. */
export function boundedMemo<T>(compute: (key: string) => T, limit: number): Memo<T> {
  let entries = new Map<string, T>();
  const memo = ((key: string): T => {
    let value = entries.get(key);
    if (value === undefined) {
      value = compute(key);
      if (entries.size >= limit) entries = new Map();
      entries.set(key, value);
    }
    return value;
  }) as Memo<T>;
  memo.clear = () => {
    entries = new Map();
  };
  return memo;
}

/** A check that answers true once after each change of `secrets`' contents (the array may be mutated in place). */
export function secretsWatch(secrets: readonly string[]): () => boolean {
  let seen: readonly string[] = [...secrets];
  return () => {
    if (seen.length === secrets.length && seen.every((secret, i) => secret === secrets[i])) return false;
    seen = [...secrets];
    return true;
  };
}
