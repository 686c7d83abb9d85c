/**
 * A recorded trace (src/trace/FORMAT.md, version 1) as the live page's messages: one session per
 * run, its actors (the run, its tool calls, the Agent's session) with the state values the trace
 * recorded from XState inspection, and its AgentEvents in the event log. The same page shows a
 * live run and a file; a trace holds no context, so the context pane stays empty.
 */
import { sanitizeValue, type SanitizeOptions } from "../inspect/sanitize.js";
import type { WireMessage } from "./feed.js";

/** A trace line that is not JSON, or a file that is not a trace: the viewer's typed error. */
export class TraceFormatError extends Error {
  override name = "TraceFormatError";
}

interface TraceRecord {
  type: string;
  seq: number;
  run?: number;
  actor?: string;
  value?: unknown;
  status?: string;
  event?: { type?: unknown };
}

const machineOf = (actor: string): string | null => (actor === "run" ? "run" : actor === "session" ? "session" : actor.startsWith("tool:") ? "toolCall" : null);

/** The messages a page shows for `text` (a trace file's content), its sessions named `<name> · run k`. */
export function traceMessages(text: string, name: string, sanitize: SanitizeOptions = {}): WireMessage[] {
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  const records = lines.map((line, index) => {
    try {
      return JSON.parse(line) as TraceRecord;
    } catch {
      throw new TraceFormatError(`line ${index + 1} of ${name} is not JSON`);
    }
  });
  const header = records[0] as (TraceRecord & { format?: unknown; version?: unknown }) | undefined;
  if (header?.type !== "trace" || header.format !== "xstate-agent-loop/trace") throw new TraceFormatError(`${name} is not an xstate-agent-loop trace (no header)`);
  if (header.version !== 1) throw new TraceFormatError(`${name} is trace format ${String(header.version)}; this build reads version 1`);

  const out: WireMessage[] = [];
  const opened = new Set<string>();
  const session = (run: number) => {
    const s = `${name} · run ${run}`;
    if (!opened.has(s)) {
      opened.add(s);
      out.push({ t: "session", s, kind: "recorded", at: 0 });
      // The run first: the other actors hang under it (a session actor, recorded too, is shown beside it).
      out.push({ t: "actor", s, n: 0, a: "run", id: "run", parent: null, machine: "run", system: null });
    }
    return s;
  };
  const actors = new Set<string>();
  for (const record of records) {
    // Notes (run 0: the session's) carry no state.
    if (typeof record.run !== "number" || (record.type !== "state" && record.type !== "event")) continue;
    const s = session(record.run);
    if (record.type === "state" && typeof record.actor === "string") {
      const key = `${s}\n${record.actor}`;
      if (!actors.has(key) && record.actor !== "run") {
        actors.add(key);
        out.push({ t: "actor", s, n: record.seq, a: record.actor, id: record.actor, parent: record.actor === "session" ? null : "run", machine: machineOf(record.actor), system: null });
      }
      out.push({ t: "snap", s, n: record.seq, a: record.actor, status: String(record.status ?? "active"), value: record.value ?? null, context: null });
    } else if (record.type === "event" && record.event) {
      const event = sanitizeValue(record.event, sanitize) as { type?: unknown };
      out.push({ t: "event", s, n: record.seq, a: "run", from: null, type: String(event.type), event });
    }
  }
  return out;
}
