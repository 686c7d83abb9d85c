/** The stateful Agent over the session statechart (SPEC R50–R55). */
export { Agent, unknownModel, type SessionActor } from "./agent.js";
export type { AgentState, AgentInitialState, AgentListener, AgentHooks, AgentStreamOptions, AgentOptions, AgentResumeOptions, SubscribeFromOptions } from "./types.js";
export { defaultConvertToLlm } from "./loop-config.js";
export { promptForOutput, OutputError, type OutputOf } from "./prompt-for-output.js";
export { ApprovalError, approveToolCall, rejectToolCall, pendingApprovalsOf, type ApprovalErrorCode, type DecisionTime } from "./approvals.js";
