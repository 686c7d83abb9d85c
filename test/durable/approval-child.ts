/**
 * One process of the cross-process approval test (R82, R81): `wait` prompts a durable Agent whose
 * `write` needs approval and exits once the call waits and its siblings ended; `approve` resumes the
 * session in a new process, approves the waiting call and writes the transcript to `out`.
 *
 *   tsx approval-child.ts wait|approve <dir> <out>
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Agent, scriptedModel } from "../../src/index.js";
import { openSqliteStore } from "../../src/sqlite.js";
import { crashSession, fixedClock } from "./crash-scenario.js";

const [mode, dir, out] = process.argv.slice(2);
const session = crashSession(join(dir, "executions"));
const tools = session.tools.map((tool) => (tool.name === "write" ? { ...tool, needsApproval: true } : tool));
const store = openSqliteStore(join(dir, "sessions.db"));
const agent = new Agent({ streamFn: session.streamFn, initialState: { model: scriptedModel, tools }, clock: fixedClock, durable: { store, sessionId: "approval" } });

if (mode === "wait") {
  let ends = 0;
  agent.subscribe(
    (event) => {
      if (event.type === "tool_execution_end") ends++;
      // The batch's two siblings ended and the write waits: this process goes away mid-run.
      if (ends === 2 && agent.pendingApprovals.length === 1) process.exit(0);
    },
    { runtimeEvents: true },
  );
  void agent.prompt("go");
} else {
  // The resumed run replays its journal up to the waiting call (no second request event is
  // emitted) and goes live there: `onLive` says when, and the call waits in `pendingApprovals`.
  let wentLive!: () => void;
  const live = new Promise<void>((resolve) => (wentLive = resolve));
  const resumed = agent.resume({ onLive: () => wentLive() });
  await live;
  const [waiting] = agent.pendingApprovals;
  if (!waiting) throw new Error("approval-child: the resumed run went live with no call waiting for approval");
  // "Always" for the rest of the session: the later turns' writes do not wait.
  agent.approve(waiting.approvalId, { always: true });
  await resumed;
  writeFileSync(out, JSON.stringify({ approved: waiting, messages: agent.state.messages }));
  process.exit(0);
}
