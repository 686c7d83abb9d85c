/**
 * `xstate-agent-loop/restate` (Node): distributed runs on Restate (SPEC R90). A session is a keyed
 * virtual object whose every step is journaled (`agentSessionObject`); `startLocalRestateServer`
 * runs the server from node_modules for development and tests. Needs `@restatedev/restate-sdk`
 * (an optional peer dependency) and, for the local server, `@restatedev/restate-server`.
 */
export {
  agentSessionObjects,
  type AgentSessionObjectOptions,
  type PromptRequest,
  type PromptResponse,
  type SessionEvent,
  type SessionState,
} from "./session-object.js";
export { JournaledSteps } from "./journaled-steps.js";
export { readSessionJournal, type ReadSessionJournalOptions } from "./journal-client.js";
export { startLocalRestateServer, restateServerBinary, RestateServerError, type LocalRestateServer, type LocalRestateServerOptions } from "./local-server.js";
