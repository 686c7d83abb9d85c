/**
 * Which states of the run machine (machines/run.machine.ts) are spans of their own, by state path:
 * the statechart is the span tree. A step state that runs a hook is a span only when the app
 * configured that hook; `convertToLlm`, which every run has, is the request's own conversion (SPEC
 * R40 and R56 tell it from the hooks), not a span. A request attempt is its streaming state.
 */
import type { HookFlags } from "../../machines/run.types.js";

export type StepSpec =
  | { kind: "hook"; hook: string; flag: keyof HookFlags | null; inTurn: boolean }
  | { kind: "request" }
  | { kind: "backoff" }
  | { kind: "compaction"; reason: "threshold" | "overflow" };

const hook = (name: string, flag: keyof HookFlags | null, inTurn = true): StepSpec => ({ kind: "hook", hook: name, flag, inTurn });

const STEPS = new Map<string, StepSpec>([
  ["pollingInitialSteering", hook("getSteeringMessages", "getSteeringMessages", false)],
  ["pollingSteering", hook("getSteeringMessages", "getSteeringMessages", false)],
  ["pollingFollowUps", hook("getFollowUpMessages", "getFollowUpMessages", false)],
  ["turn.preparingNextTurn", hook("prepareNextTurn", "prepareNextTurn")],
  ["turn.repollingSteering", hook("getSteeringMessages", "getSteeringMessages")],
  ["turn.compactingProactively", { kind: "compaction", reason: "threshold" }],
  ["turn.compactingOnOverflow", { kind: "compaction", reason: "overflow" }],
  ["turn.preparingRequest", hook("prepareRequest", "prepareRequest")],
  ["turn.requesting.transformingContext", hook("transformContext", "transformContext")],
  ["turn.requesting.resolvingApiKey", hook("getApiKey", "getApiKey")],
  ["turn.requesting.awaitingRequestSlot", hook("requestLimiter.acquire", "requestLimiter")],
  ["turn.requesting.backingOff", { kind: "backoff" }],
  ["turn.requesting.streaming", { kind: "request" }],
  ["turn.finishingTurn", hook("finishTurn", "finishTurn")],
]);

const STREAMING_WITH_TOOLS = "turn.requesting.streamingWithTools";
const REQUEST: StepSpec = { kind: "request" };

/** The span a state path opens, and the path prefix it lasts for; undefined for states that are not spans. */
export function stepAt(path: string, hooks: HookFlags): { spec: StepSpec; path: string } | undefined {
  const spec = STEPS.get(path);
  if (spec) return spec.kind === "hook" && spec.flag !== null && !hooks[spec.flag] ? undefined : { spec, path };
  // R70: a parallel state; the request lasts while either region is in it.
  if (path.startsWith(STREAMING_WITH_TOOLS)) return { spec: REQUEST, path: STREAMING_WITH_TOOLS };
  return undefined;
}

/**
 * A state value as a dotted path (`turn.requesting.streaming`); a parallel state's first region
 * only (its spans are the parallel state's own).
 */
export function pathOf(value: unknown): string {
  if (typeof value === "string") return value;
  let path = "";
  let node = value;
  while (node !== null && typeof node === "object") {
    let key: string | undefined;
    for (const k in node as object) {
      key = k;
      break;
    }
    if (key === undefined) break;
    path = path === "" ? key : `${path}.${key}`;
    node = (node as Record<string, unknown>)[key];
  }
  return typeof node === "string" ? (path === "" ? node : `${path}.${node}`) : path;
}
