/**
 * Where the terminal agent keeps its sessions (issue 20 item 5): one SQLite store per working
 * directory under `$XDG_STATE_HOME/xstate-agent/<hash of the directory>/sessions.db`, outside the
 * workspace, so the model cannot read the journal or forge an approval through its file tools
 * (which are also told to refuse this directory when the workspace contains it).
 */
import { createHash, randomBytes } from "node:crypto";
import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import type { Json, RunStore, SessionInfo } from "../../store/index.js";
import { formatCount } from "./format.js";

export const STORE_FILE = "sessions.db";

/** What the CLI keeps with a session (the store's `meta`). */
export interface SessionMeta {
  cwd: string;
  /** The first prompt, cut to 200 characters. */
  firstPrompt: string;
  /** Transcript length at the last quiet point. */
  messages: number;
  /** A run was going when the meta was last written (true after a crash or a quit mid-run). */
  running: boolean;
}

/** The store's directory for `cwd`: `$XDG_STATE_HOME` (default `~/.local/state`)`/xstate-agent/<hash>`. */
export function sessionStoreDir(cwd: string, env: Record<string, string | undefined>): string {
  const stateHome = env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : path.join(env.HOME || homedir(), ".local", "state");
  return path.join(stateHome, "xstate-agent", directoryHash(cwd));
}

/** 16 hex digits of the SHA-256 of the directory's real path (a link and its target share sessions). */
export function directoryHash(cwd: string): string {
  let real = cwd;
  try {
    real = realpathSync(cwd);
  } catch {
    // A directory that is not there has no sessions worth sharing: its path will do.
  }
  return createHash("sha256").update(real).digest("hex").slice(0, 16);
}

/** A new session id: sortable by time, unique enough per directory (`20261201-150300-9f3a`). */
export function newSessionId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${stamp}-${randomBytes(2).toString("hex")}`;
}

export function metaOf(info: SessionInfo): Partial<SessionMeta> {
  const meta = info.meta;
  return meta !== null && typeof meta === "object" && !Array.isArray(meta) ? (meta as Partial<SessionMeta>) : {};
}

/** Writes the session's meta (opening its writer briefly: call it only while no run holds the session). */
export function writeMeta(store: RunStore, sessionId: string, meta: SessionMeta): void {
  const writer = store.openSession(sessionId, { meta: meta as unknown as Json });
  try {
    writer.setMeta(meta as unknown as Json);
  } finally {
    writer.release();
  }
}

/** `--sessions`: one line per session, newest first. */
export function formatSessionList(sessions: readonly SessionInfo[], storeFile: string, open: ReadonlyMap<string, number | undefined> = new Map()): string {
  if (sessions.length === 0) return `No saved sessions for this directory (store: ${storeFile}).\n`;
  const rows = sessions.map((info) => {
    const meta = metaOf(info);
    const when = new Date(info.updatedAt).toISOString().replace("T", " ").slice(0, 19);
    const count = `${formatCount(meta.messages ?? 0)} msg${meta.messages === 1 ? "" : "s"}`;
    // R84: a session another process has open (its pid when known) cannot be resumed until it quits.
    // (A session whose stored meta is damaged: listed, said so; its first prompt is unknown.)
    const state = info.damaged ? " (damaged)" : open.has(info.sessionId) ? ` (open${open.get(info.sessionId) !== undefined ? ` in pid ${open.get(info.sessionId)}` : ""})` : meta.running ? " (interrupted)" : "";
    return `${info.sessionId}  ${when}  ${count.padStart(8)}${state}  ${JSON.stringify(meta.firstPrompt ?? "")}`;
  });
  return `Sessions for this directory, newest first (store: ${storeFile}; --resume [id] continues one):\n${rows.join("\n")}\n`;
}
