/**
 * The terminal agent in a real pseudo-terminal (tmux), for the CLI's end-to-end tests: each test
 * file gets its own tmux server, a scratch repository and a fresh state home, all removed after it.
 */
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { afterAll } from "vitest";
import { requireSystemBinary } from "../support/system-binary.js";
import { waitForPane } from "../support/pane.js";
import { MAIN, makeRepo, TSX } from "./fixture.js";
import { freshStateHome } from "./sessions-helpers.js";

export interface TmuxCliOptions {
  /** The test file, named in the message when tmux is missing and in the tmux socket. */
  file: string;
  width: number;
  height: number;
  /** How long `until` waits by default. */
  timeoutMs: number;
  /** `until` reads the screen with tmux's soft wraps joined. */
  joinWraps?: boolean;
}

/** A CLI running in its own tmux session. */
export interface TmuxCli {
  keys(...keys: string[]): void;
  /** The screen (scrollback included) once `test` holds on it. */
  until(what: string, test: (screen: string) => boolean, timeoutMs?: number): Promise<string>;
  /** The screen now, tmux's soft wraps joined (a long line is one line, wherever the wrap fell). */
  joined(): string;
  /** The CLI process itself: the pane's shell runs tsx, which runs the CLI as its child. */
  cliPid(): number;
}

/** The direct children of a process. */
const childrenOf = (pid: number) =>
  execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
    .split("\n")
    .map((line) => Number(line.trim()))
    .filter((child) => child > 0);

export function tmuxCli({ file, width, height, timeoutMs, joinWraps = false }: TmuxCliOptions) {
  const binary = requireSystemBinary({ name: "tmux", debianPackage: "tmux", purpose: `the CLI's pseudo-terminal tests (${file})` });
  const socket = `xal-${file.replace(/\W+/g, "-")}-${process.pid}`;
  const tmux = (...args: string[]) => execFileSync(binary!, ["-L", socket, ...args], { encoding: "utf8" });
  const repo = makeRepo();
  const stateHome = freshStateHome();
  afterAll(() => {
    if (binary) {
      try {
        tmux("kill-server");
      } catch {
        // already gone
      }
    }
    repo.cleanup();
    rmSync(stateHome, { recursive: true, force: true });
  });

  /** Runs the CLI with `args` in a new tmux session `session`, in the scratch repository. */
  const start = (session: string, args: string): TmuxCli => {
    const command = `env -u NO_COLOR -u ANTHROPIC_API_KEY XDG_STATE_HOME=${JSON.stringify(stateHome)} ${JSON.stringify(process.execPath)} ${JSON.stringify(TSX)} ${JSON.stringify(MAIN)} ${args}; echo "EXITED $?"; sleep 60`;
    tmux("new-session", "-d", "-x", String(width), "-y", String(height), "-s", session, "-c", repo.root, "-e", "TERM=xterm-256color", command);
    const joined = () => tmux("capture-pane", "-p", "-J", "-S", "-", "-t", session);
    const capture = joinWraps ? joined : () => tmux("capture-pane", "-p", "-S", "-", "-t", session);
    return {
      keys: (...keys) => void tmux("send-keys", "-t", session, ...keys),
      until: (what, test, wait = timeoutMs) => waitForPane(capture, what, test, wait),
      joined,
      cliPid() {
        const shell = Number(tmux("list-panes", "-t", session, "-F", "#{pane_pid}").trim());
        const [tsx] = childrenOf(shell);
        const [cli] = childrenOf(tsx!);
        return cli!;
      },
    };
  };
  return { available: binary !== undefined, repo, start };
}
