import type { Usage } from "./messages.js";

/** A usage record with every count at zero. */
export function emptyUsage(): Usage {
  return {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

/** `total` plus `usage` (a count `usage` lacks adds nothing); a new record. */
export function addUsage(total: Usage, usage: Partial<Usage>): Usage {
  return {
    input: total.input + (usage.input ?? 0),
    output: total.output + (usage.output ?? 0),
    cacheRead: total.cacheRead + (usage.cacheRead ?? 0),
    cacheWrite: total.cacheWrite + (usage.cacheWrite ?? 0),
    totalTokens: total.totalTokens + (usage.totalTokens ?? 0),
    cost: {
      input: total.cost.input + (usage.cost?.input ?? 0),
      output: total.cost.output + (usage.cost?.output ?? 0),
      cacheRead: total.cost.cacheRead + (usage.cost?.cacheRead ?? 0),
      cacheWrite: total.cost.cacheWrite + (usage.cost?.cacheWrite ?? 0),
      total: total.cost.total + (usage.cost?.total ?? 0),
    },
  };
}
