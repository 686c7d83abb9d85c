import { systemRegistry } from "../actors/system-deps.js";
import type { SessionRuntime } from "./session-runtime.js";

/** Each session's runtime, keyed by the session's actor system, like a run's dependencies. */
const sessions = systemRegistry<SessionRuntime>("agent: session runtime");

export const bindSession = sessions.bind;
export const sessionOf = sessions.of;
