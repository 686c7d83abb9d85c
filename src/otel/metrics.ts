/**
 * Metrics by the GenAI conventions: `gen_ai.client.token.usage` (tokens per request, by
 * `gen_ai.token.type`) and `gen_ai.client.operation.duration` (seconds, per request and per tool
 * call: `gen_ai.operation.name` tells `chat` from `execute_tool`), and the loop's
 * `xstate_agent_loop.runs` (runs ended, by `xstate_agent_loop.end_reason`).
 */
import type { Attributes, Counter, Histogram, Meter } from "@opentelemetry/api";
import { ATTR } from "./attributes.js";
import type { Usage } from "../types.js";

export interface LoopMetrics {
  request(seconds: number, usage: Usage | undefined, attributes: Attributes): void;
  toolCall(seconds: number, attributes: Attributes): void;
  runEnded(attributes: Attributes): void;
}

// The conventions' advised buckets.
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];

export function loopMetrics(meter: Meter): LoopMetrics {
  const tokens: Histogram = meter.createHistogram("gen_ai.client.token.usage", {
    description: "Number of input and output tokens used",
    unit: "{token}",
    advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
  });
  const duration: Histogram = meter.createHistogram("gen_ai.client.operation.duration", {
    description: "GenAI operation duration",
    unit: "s",
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });
  const runs: Counter = meter.createCounter("xstate_agent_loop.runs", { description: "Agent runs ended, by end reason", unit: "{run}" });
  return {
    request(seconds, usage, attributes) {
      duration.record(seconds, attributes);
      if (!usage) return;
      tokens.record((usage.input ?? 0) + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0), { ...attributes, [ATTR.tokenType]: "input" });
      tokens.record(usage.output ?? 0, { ...attributes, [ATTR.tokenType]: "output" });
    },
    toolCall(seconds, attributes) {
      duration.record(seconds, attributes);
    },
    runEnded(attributes) {
      runs.add(1, attributes);
    },
  };
}
