/**
 * `--inspect`: the live local inspector (xstate-agent-loop/inspector), its URL printed.
 * `--inspect=stately`: streams the session to the Stately inspector through its WebSocket relay. Sending
 * into a port nobody listens on would lose every event without a word, so the relay is looked for
 * first and started when absent (@statelyai/inspect's `createInspectorServer`, which also opens
 * its page in the browser); when that fails too, the CLI says so and runs without the inspector.
 */
import { connect } from "node:net";
import type { InspectionEvent } from "xstate";
import type { LiveInspector } from "../../inspector/index.js";
import type { AgentOptions } from "../../agent/types.js";
import type { RunStore } from "../../store/index.js";

export const DEFAULT_LIVE_INSPECTOR_PORT = 4180;

export const DEFAULT_INSPECTOR_URL = "ws://localhost:8080";

export interface Inspector {
  next(event: unknown): void;
  close(): Promise<void>;
}

export interface InspectorRelay {
  stop(): void;
}

export interface InspectorSetup {
  /** The live inspector's address (default 127.0.0.1, port 4180, or a free one when that is taken). */
  live?: { port?: number; host?: string; onStart?: (inspector: LiveInspector) => void };
  /** The relay's WebSocket URL (default ws://localhost:8080). */
  url?: string;
  /** Starts a relay on `port` (default: `createInspectorServer`, which opens the inspector page). */
  startRelay?: (port: number) => Promise<InspectorRelay>;
}

export interface InspectorConnection {
  inspector?: Inspector;
  relay?: InspectorRelay;
  /** What happened, for the user. */
  notice: string;
  tone: "dim" | "warn" | "info";
}

/** Resolves whether something accepts TCP connections on `host:port` (within `timeoutMs`). */
export function isListening(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (listening: boolean) => {
      socket.destroy();
      resolve(listening);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

async function startStatelyRelay(port: number): Promise<InspectorRelay> {
  const { createInspectorServer } = await import("@statelyai/inspect/server");
  const relay = createInspectorServer({ port });
  // It does not report when it listens: wait until it accepts connections.
  for (let attempt = 0; attempt < 20; attempt++) {
    if (await isListening("localhost", port, 250)) return relay;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  relay.stop();
  throw new Error(`it did not start listening on port ${port}`);
}

export async function connectInspector(setup: InspectorSetup = {}): Promise<InspectorConnection> {
  const url = setup.url ?? DEFAULT_INSPECTOR_URL;
  const { hostname, port: portText } = new URL(url);
  const port = Number(portText || 80);
  const host = hostname.replace(/^\[|\]$/g, "");
  const page = `http://${hostname}:${port}`;
  let relay: InspectorRelay | undefined;
  let how: string;
  if (await isListening(host, port)) how = `to the relay at ${url} (its page: ${page})`;
  else {
    try {
      relay = await (setup.startRelay ?? startStatelyRelay)(port);
    } catch (error) {
      return {
        notice: `inspector: nothing listens on ${url} and a relay could not be started there (${(error as Error).message}); continuing without the inspector.`,
        tone: "warn",
      };
    }
    how = `to a relay started at ${url}, as none was running: open ${page} (it embeds stately.ai/inspect, which needs the internet)`;
  }
  try {
    const { connectWebSocketInspector } = await import("../../inspect/index.js");
    const inspector = connectWebSocketInspector({ url }) as unknown as Inspector;
    return { inspector, relay, notice: `inspector: sending the session, its runs and tool calls ${how}`, tone: "dim" };
  } catch (error) {
    relay?.stop();
    return { notice: `Inspector support is not installed (${(error as Error).message.split("\n")[0]}); continuing without it.`, tone: "warn" };
  }
}

/** What the live inspector is told of the CLI's session: its id, and how a fork of it runs (a saved session). */
export interface LiveSession {
  sessionId?: string;
  fork?: { store: RunStore; sessionId: string; options: () => AgentOptions; paidModel?: string };
}

/** `--inspect`: starts the live inspector page; the session is attached to it on its first step. */
export async function connectLiveInspector(setup: InspectorSetup = {}, session: LiveSession = {}): Promise<InspectorConnection> {
  const { createLiveInspector, agentForkRunner } = await import("../../inspector/index.js");
  const host = setup.live?.host;
  const port = setup.live?.port ?? DEFAULT_LIVE_INSPECTOR_PORT;
  let live: LiveInspector;
  try {
    live = await createLiveInspector({ port, host });
  } catch (error) {
    // The default port is taken (another CLI is inspecting): any free port will do, the URL is printed.
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE" || setup.live?.port !== undefined) {
      return { notice: `inspector: the live inspector could not start (${(error as Error).message}); continuing without it.`, tone: "warn" };
    }
    live = await createLiveInspector({ port: 0, host });
  }
  if (session.fork) {
    const { store, sessionId, options, paidModel } = session.fork;
    live.addForkSource({ store, sessionId, run: agentForkRunner(options), ...(paidModel ? { paidModel } : {}) });
  }
  setup.live?.onStart?.(live);
  let attached: ((event: InspectionEvent) => void) | undefined;
  const inspector: Inspector = {
    next(event) {
      const next = (attached ??= live.observer.attach({ kind: "session", ...(session.sessionId ? { sessionId: session.sessionId } : {}) }) ?? (() => {}));
      next(event as InspectionEvent);
    },
    close: () => live.close(),
  };
  return { inspector, notice: `inspector: watch the session live at ${live.url}`, tone: "info" };
}
