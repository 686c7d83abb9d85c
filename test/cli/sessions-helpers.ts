/** Helpers of the session tests (issue 20 item 5): an in-process terminal whose output can be awaited. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { runCli } from "../../src/node/cli/app.js";
import { ttyIO } from "./fixture.js";

/** A fresh `XDG_STATE_HOME` per test, so sessions of one test never meet another's. */
export const freshStateHome = () => mkdtempSync(path.join(tmpdir(), "xal-cli-sessions-"));

/** Strips ANSI escapes (the live screen's styles and cursor moves). */
export const plain = (text: string) => text.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07/g, "");

/** An interactive CLI on a fake terminal; `until(text)` resolves once the output contains it (after `from`). */
export async function terminal(cwd: string, argv: string[], env: Record<string, string>) {
  const tty = ttyIO(cwd, { env, columns: 160 });
  const waiters: { text: string; from: number; resolve: () => void }[] = [];
  const write = tty.io.stdout.write.bind(tty.io.stdout);
  tty.io.stdout.write = (text: string) => {
    const result = write(text);
    const screen = plain(tty.output());
    for (const waiter of [...waiters]) {
      if (screen.indexOf(waiter.text, waiter.from) >= 0) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
    return result;
  };
  const exit = runCli(argv, tty.io);
  await tty.ready;
  return {
    ...tty,
    exit,
    screen: () => plain(tty.output()),
    /** Resolves when `text` appears at or after the offset `from` of the plain output. */
    until(text: string, from = 0): Promise<void> {
      if (plain(tty.output()).indexOf(text, from) >= 0) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ text, from, resolve }));
    },
  };
}
