/**
 * The CLI's output cannot be written: a closed pipe is a quiet exit 0, anything else (a full disk)
 * one line on stderr and exit 74, never a stack trace. The process test writes to /dev/full, which
 * answers every write with ENOSPC.
 */
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { onOutputError, OUTPUT_ERROR_EXIT } from "../../src/node/cli/output-error.js";
import { MAIN, TSX } from "./fixture.js";

const errno = (code: string, message: string) => Object.assign(new Error(message), { code });

describe("the CLI's output cannot be written", () => {
  it("EPIPE exits 0 quietly; another error says so in one line and exits 74", () => {
    const outcomes: Array<{ code: number; said: string }> = [];
    for (const error of [errno("EPIPE", "EPIPE: broken pipe, write"), errno("ENOSPC", "ENOSPC: no space left on device, write")]) {
      let said = "";
      onOutputError(error, { write: (text) => (said += text) }, (code) => outcomes.push({ code, said }));
    }
    expect(outcomes).toEqual([
      { code: 0, said: "" },
      { code: OUTPUT_ERROR_EXIT, said: "error: cannot write the output: ENOSPC: no space left on device, write\n" },
    ]);
    expect(OUTPUT_ERROR_EXIT).toBe(74);
  });

  it.skipIf(!existsSync("/dev/full"))("a one-shot run and --help with stdout on /dev/full: exit 74, one line, no stack", { timeout: 60_000 }, () => {
    const state = mkdtempSync(path.join(tmpdir(), "xal-full-"));
    const full = openSync("/dev/full", "w");
    try {
      for (const args of [["--help"], ["--offline", "--no-save", "hi"]]) {
        const child = spawnSync(process.execPath, [TSX, MAIN, ...args], { stdio: ["ignore", full, "pipe"], encoding: "utf8", env: { ...process.env, XDG_STATE_HOME: state, NO_COLOR: "1" } });
        expect({ args, status: child.status, stderr: child.stderr }).toEqual({ args, status: 74, stderr: "error: cannot write the output: ENOSPC: no space left on device, write\n" });
      }
    } finally {
      closeSync(full);
      rmSync(state, { recursive: true, force: true });
    }
  });
});
