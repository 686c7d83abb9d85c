/**
 * Issue 16: tests that need a system program find it on PATH, skip with a one-line notice naming
 * the Debian package when it is missing, and fail in CI.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { findOnPath, inCI, requireSystemBinary } from "./system-binary.js";

const root = mkdtempSync(join(tmpdir(), "xal-path-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A directory holding `name`, executable or not. */
function dirWith(name: string, executable: boolean): string {
  const dir = mkdtempSync(join(root, "bin-"));
  writeFileSync(join(dir, name), "#!/bin/sh\n");
  chmodSync(join(dir, name), executable ? 0o755 : 0o644);
  return dir;
}

const TMUX = { name: "fake-tmux", debianPackage: "tmux", purpose: "the terminal tests" };

describe("issue 16: system binaries on PATH", () => {
  it("finds the first executable file on PATH, skipping empty entries, non-executables and directories", () => {
    const plain = dirWith("fake-tmux", false);
    const asDir = mkdtempSync(join(root, "dir-"));
    mkdirSync(join(asDir, "fake-tmux"));
    const real = dirWith("fake-tmux", true);
    const later = dirWith("fake-tmux", true);
    expect(findOnPath("fake-tmux", ["", plain, asDir, real, later].join(delimiter))).toBe(join(real, "fake-tmux"));
    expect(findOnPath("fake-tmux", [plain, asDir].join(delimiter))).toBeUndefined();
    expect(findOnPath("fake-tmux", "")).toBeUndefined();
  });

  it("reads CI as set for any value but empty, 0 or false", () => {
    expect(inCI({ CI: "1" })).toBe(true);
    expect(inCI({ CI: "true" })).toBe(true);
    expect(inCI({})).toBe(false);
    expect(inCI({ CI: "" })).toBe(false);
    expect(inCI({ CI: "0" })).toBe(false);
    expect(inCI({ CI: "FALSE" })).toBe(false);
  });

  it("returns the path when present, silently", () => {
    const dir = dirWith("fake-tmux", true);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      expect(requireSystemBinary(TMUX, { PATH: dir, CI: "1" })).toBe(join(dir, "fake-tmux"));
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it("missing outside CI: undefined, after one notice line naming the Debian package", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      expect(requireSystemBinary(TMUX, { PATH: root })).toBeUndefined();
      expect(warn).toHaveBeenCalledTimes(1);
      const [line] = warn.mock.calls[0] as [string];
      expect(line).not.toContain("\n");
      expect(line).toBe("skipping the terminal tests: fake-tmux not found on PATH (Debian package tmux: apt-get install tmux)");
    } finally {
      warn.mockRestore();
    }
  });

  it("missing in CI: throws, naming the package", () => {
    expect(() => requireSystemBinary(TMUX, { PATH: root, CI: "true" })).toThrow(
      "fake-tmux not found on PATH; CI requires it for the terminal tests (apt-get install tmux)",
    );
  });
});
