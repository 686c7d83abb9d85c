// The work every peer does, from one script: the scenarios, the responses a scripted model gives,
// and the counters each run is checked against (requests, tool executions, deltas delivered).

/** (a) 5 requests, 12 tools: 4 turns of 3 parallel calls, then a text answer; one-turn; a 3,000-delta stream. */
export const SCENARIOS = {
  a: { label: "(a) 5 requests, 12 tools", requests: 5, tools: 12, deltas: 1 },
  one: { label: "one-turn run", requests: 1, tools: 0, deltas: 1 },
  stream: { label: "3,000-delta stream", requests: 1, tools: 0, deltas: 3000 },
};
export const TOOL_NAMES = ["tool0", "tool1", "tool2"];

/** What the run in progress has done (runs are timed one after another, so one set of counters). */
export const counters = { requests: 0, tools: 0, deltas: 0 };
let scenario = SCENARIOS.a;

export function startRun(name) {
  scenario = SCENARIOS[name];
  counters.requests = 0;
  counters.tools = 0;
  counters.deltas = 0;
}

/**
 * The next response of the run in progress: `{ calls: [{ id, name, args }] }` or `{ text, deltas }`
 * (the text `deltas` pieces long when streamed; one delta for the short answers).
 */
export function nextResponse() {
  const turn = counters.requests++;
  if (turn < scenario.requests - 1) return { calls: TOOL_NAMES.map((name, i) => ({ id: `c${turn}_${i}`, name, args: { n: i } })) };
  if (scenario.deltas > 1) return { text: "x".repeat(scenario.deltas), pieces: Array.from({ length: scenario.deltas }, () => "x") };
  return { text: "done", pieces: ["done"] };
}

/** Every tool of every peer runs this: trivial, counted. */
export function executeTool() {
  counters.tools++;
  return "ok";
}

/** Throws unless the run did the scenario's work; `streamed` false: deltas are not delivered in this mode. */
export function checkRun(name, label, streamed) {
  const expected = SCENARIOS[name];
  const problems = [];
  if (counters.requests !== expected.requests) problems.push(`${counters.requests} requests, expected ${expected.requests}`);
  if (counters.tools !== expected.tools) problems.push(`${counters.tools} tool executions, expected ${expected.tools}`);
  if (streamed && counters.deltas !== expected.deltas) problems.push(`${counters.deltas} deltas delivered, expected ${expected.deltas}`);
  if (problems.length) throw new Error(`bench:peers work check failed: ${label} on ${expected.label}: ${problems.join("; ")}`);
}
