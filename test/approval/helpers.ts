/** Scenarios for the approval suites (SPEC R82): an Agent on the scripted model, a logged read and write tool. */
import { Agent, scriptedModel, scriptedStreamFn, type AgentOptions, type AgentTool, type AnyAgentEvent, type Script } from "../../src/index.js";
import type { ScriptedStreamFn } from "../../src/index.js";
import { logEntry } from "../loop/helpers.js";

export const pathParams = { type: "object", properties: { path: { type: "string" }, text: { type: "string" } }, required: ["path"] } as const;

/** One line per event (deltas left out), approvals included; tools add `exec:` lines. */
export function entryOf(event: AnyAgentEvent): string {
  if (event.type === "tool_approval_requested") return `approval?:${event.toolName}:${event.approvalId}:${event.reason}`;
  if (event.type === "tool_approval_resolved") {
    return `approval${event.decision === "approved" ? "✓" : "✗"}:${event.approvalId}${event.reason !== undefined ? `:${event.reason}` : ""}${event.args !== undefined ? `:${JSON.stringify(event.args)}` : ""}`;
  }
  return logEntry(event as never);
}

/** Resolves when an event matching `test` arrived (or had arrived). */
export class EventLog {
  readonly events: AnyAgentEvent[] = [];
  readonly log: string[] = [];
  private waiters: { test: (event: AnyAgentEvent) => boolean; resolve: (event: AnyAgentEvent) => void }[] = [];

  push(event: AnyAgentEvent): void {
    this.events.push(event);
    if (event.type !== "message_update") this.log.push(entryOf(event));
    this.waiters = this.waiters.filter((waiter) => (waiter.test(event) ? (waiter.resolve(event), false) : true));
  }

  note(entry: string): void {
    this.log.push(entry);
  }

  /** The first event matching `test` after the `skip` earlier ones that matched. */
  when<E extends AnyAgentEvent>(test: (event: AnyAgentEvent) => event is E, skip?: number): Promise<E>;
  when(test: (event: AnyAgentEvent) => boolean, skip?: number): Promise<AnyAgentEvent>;
  when(test: (event: AnyAgentEvent) => boolean, skip = 0): Promise<AnyAgentEvent> {
    const seen = this.events.filter(test);
    if (seen.length > skip) return Promise.resolve(seen[skip]);
    let left = skip - seen.length;
    return new Promise((resolve) => this.waiters.push({ test: (event) => test(event) && left-- === 0, resolve }));
  }

  /** The `n`th approval request (0-based). */
  approvalRequest(n = 0) {
    return this.when((event): event is Extract<AnyAgentEvent, { type: "tool_approval_requested" }> => event.type === "tool_approval_requested", n);
  }

  /** Until `count` calls of `toolName` ended. */
  toolEnds(toolName: string, count: number) {
    return this.when((event) => event.type === "tool_execution_end" && event.toolName === toolName, count - 1);
  }
}

export interface Tools {
  read: AgentTool;
  write: AgentTool;
  executed: string[];
}

/** `read` runs at once; `write` needs approval (or as `needsApproval` says). Each execution is logged. */
export function tools(log: EventLog, write: Partial<AgentTool> = {}): Tools {
  const executed: string[] = [];
  const run = (name: string) => async (_id: string, args: unknown) => {
    const line = `exec:${name}:${JSON.stringify(args)}`;
    executed.push(line);
    log.note(line);
    return { content: [{ type: "text" as const, text: `${name} ok` }], details: {} };
  };
  return {
    read: { name: "read", label: "read", description: "Read", parameters: pathParams, execute: run("read") },
    write: { name: "write", label: "write", description: "Write", parameters: pathParams, execute: run("write"), needsApproval: true, ...write },
    executed,
  };
}

export interface ApprovalScenario {
  agent: Agent;
  stream: ScriptedStreamFn;
  log: EventLog;
  tools: Tools;
}

/** An Agent whose every event (the loop's own included) goes to `log`. */
export function approvalScenario(script: Script, options: Partial<AgentOptions> = {}, write: Partial<AgentTool> = {}): ApprovalScenario {
  const log = new EventLog();
  const toolSet = tools(log, write);
  const stream = scriptedStreamFn(script);
  const agent = new Agent({ streamFn: stream, ...options, initialState: { model: scriptedModel, tools: [toolSet.read, toolSet.write] } });
  agent.subscribe((event) => log.push(event), { runtimeEvents: true });
  return { agent, stream, log, tools: toolSet };
}

/** The texts of the tool results of a transcript, `name:text`. */
export function resultsOf(messages: readonly unknown[]): string[] {
  return (messages as { role: string; toolName?: string; content?: { type: string; text?: string }[] }[])
    .filter((m) => m.role === "toolResult")
    .map((m) => `${m.toolName}:${m.content!.map((block) => block.text ?? "").join("")}`);
}
