/**
 * `xstate-agent-loop/inspector` (Node only): a live, local, offline inspector. A page served on
 * the loopback shows each watched run or session: the actor tree, each machine's statechart (the
 * project's own diagrams) with its active states, the event log and the context at a step.
 *
 * ```ts
 * import { createLiveInspector } from "xstate-agent-loop/inspector";
 * const inspector = await createLiveInspector({ port: 0 });
 * console.log(inspector.url); // open it; pass `inspect: [inspector.observer]` to an Agent or agentLoop
 * await inspector.close();
 * ```
 */
export { createLiveInspector, type LiveInspector, type LiveInspectorOptions } from "./server.js";
export { createInspectorFeed, type InspectorFeed, type FeedOptions, type WireMessage } from "./feed.js";
export { agentForkRunner, ForkError, type ForkSource, type ForkContext, type ForkEdit, type ApprovalDecision } from "./fork.js";
export type { ForkPoint } from "./fork-points.js";
export type { ForkRequest, StartedFork, ForkApprovalRequest } from "./forks.js";
