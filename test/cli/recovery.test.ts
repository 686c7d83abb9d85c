/**
 * Issue 17 item 7: the terminal agent's Agent gets retries (R60), output-limit recovery (R61) and
 * an abort grace (R67) by default, and each flag turns its mechanism off or tunes it. The Agent
 * class is wrapped to keep the options the CLI constructs it with; the run itself is the real
 * offline demo (one turn).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseCliArgs, type CliOptions } from "../../src/node/cli/args.js";
import { recoveryConfig } from "../../src/node/cli/recovery.js";
import { fakeIO, makeRepo } from "./fixture.js";

const constructed = vi.hoisted(() => [] as Record<string, unknown>[]);
vi.mock("../../src/index.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/index.js")>();
  class RecordingAgent extends actual.Agent {
    constructor(options: ConstructorParameters<typeof actual.Agent>[0]) {
      constructed.push({ ...options });
      super(options);
    }
  }
  return { ...actual, Agent: RecordingAgent };
});
const { runCli } = await import("../../src/node/cli/app.js");

let root: string;
let cleanup: () => void;
beforeAll(() => ({ root, cleanup } = makeRepo()));
afterAll(() => cleanup());

const options = (...argv: string[]): CliOptions => {
  const parsed = parseCliArgs([...argv, "hi"]);
  if (parsed.kind !== "run") throw new Error(JSON.stringify(parsed));
  return parsed.options;
};

/** The recovery keys of the options the CLI built its Agent with, after a one-turn offline run. */
async function agentRecovery(...flags: string[]): Promise<Record<string, unknown>> {
  constructed.length = 0;
  const { io, stderr } = fakeIO(root);
  expect(await runCli(["--offline", "--max-turns", "1", ...flags, "summarize this repository"], io)).toBe(0);
  expect(stderr()).toBe("");
  expect(constructed).toHaveLength(1);
  const { retry, outputLimit, abortGraceMs, compact } = constructed[0]!;
  return Object.fromEntries(Object.entries({ retry, outputLimit, abortGraceMs, compact }).filter(([, value]) => value !== undefined));
}

describe("issue 17 item 7: the CLI's recovery settings", () => {
  it("R60, R61, R67: recoveryConfig gives the loop's defaults, or leaves a mechanism out when its flag turns it off", () => {
    expect(recoveryConfig(options())).toEqual({ retry: {}, outputLimit: {}, abortGraceMs: 5000 });
    expect(recoveryConfig(options("--max-attempts", "3", "--abort-grace-ms", "250"))).toEqual({ retry: { maxAttempts: 3 }, outputLimit: {}, abortGraceMs: 250 });
    expect(recoveryConfig(options("--no-retry", "--no-output-recovery", "--no-abort-grace"))).toEqual({});
  });

  it("R60, R61, R67: the CLI's Agent is built with retries, output-limit recovery and a 5 s grace by default", async () => {
    expect(await agentRecovery()).toEqual({ retry: {}, outputLimit: {}, abortGraceMs: 5000 });
  });

  it("R60, R61, R67: and without them when the flags say so", async () => {
    expect(await agentRecovery("--no-retry", "--no-output-recovery", "--no-abort-grace")).toEqual({});
    expect(await agentRecovery("--no-retry", "--abort-grace-ms", "0")).toEqual({ outputLimit: {}, abortGraceMs: 0 });
  });
});
