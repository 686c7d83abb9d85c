import { describe, expect, it } from "vitest";
import { DEFAULT_ABORT_GRACE_MS, parseCliArgs, USAGE } from "../../src/node/cli/args.js";

/** Issue 17 item 7: what every run gets unless a flag says otherwise. */
const RECOVERY_DEFAULTS = { retry: true, outputLimitRecovery: true, abortGraceMs: DEFAULT_ABORT_GRACE_MS, compact: true, streamingTools: true, save: true, sessions: false };

describe("argument parsing", () => {
  it("a one-shot prompt from the positional words, defaults for the rest", () => {
    expect(parseCliArgs(["find", "the", "TODOs"])).toEqual({
      kind: "run",
      options: { prompt: "find the TODOs", offline: false, thinking: "off", yes: false, inspect: false, otel: false, ...RECOVERY_DEFAULTS },
    });
  });

  it("--inspect: the live inspector; --inspect=live the same; --inspect=stately the Stately relay; anything else an error", () => {
    const inspectOf = (argv: string[]) => {
      const parsed = parseCliArgs(argv);
      return parsed.kind === "run" ? { inspect: parsed.options.inspect, inspectWith: parsed.options.inspectWith } : parsed;
    };
    expect([["--inspect", "hi"], ["--inspect=live", "hi"], ["--inspect=stately", "hi"], ["hi"]].map(inspectOf)).toEqual([
      { inspect: true, inspectWith: undefined },
      { inspect: true, inspectWith: undefined },
      { inspect: true, inspectWith: "stately" },
      { inspect: false, inspectWith: undefined },
    ]);
    expect(parseCliArgs(["--inspect=cloud"])).toEqual({ kind: "error", message: 'Unknown inspector "cloud" (--inspect, --inspect=live or --inspect=stately).' });
    // The error names all three: so does --help.
    expect(["--inspect ", "--inspect=live", "--inspect=stately"].filter((spelling) => !USAGE.includes(spelling))).toEqual([]);
  });

  it("words after -- are the prompt's, even when they look like --inspect=…", () => {
    expect(parseCliArgs(["--offline", "--no-save", "--", "--inspect=foo"])).toMatchObject({ kind: "run", options: { prompt: "--inspect=foo", inspect: false } });
    expect(parseCliArgs(["--inspect=stately", "--", "--inspect=live", "now"])).toMatchObject({ kind: "run", options: { prompt: "--inspect=live now", inspect: true, inspectWith: "stately" } });
    expect(parseCliArgs(["--", "--abort-grace-ms", "-5"])).toMatchObject({ kind: "run", options: { prompt: "--abort-grace-ms -5", abortGraceMs: DEFAULT_ABORT_GRACE_MS } });
  });

  it("no prompt: the interactive session", () => {
    expect(parseCliArgs([])).toEqual({ kind: "run", options: { offline: false, thinking: "off", yes: false, inspect: false, otel: false, ...RECOVERY_DEFAULTS } });
  });

  it("every option, long and short", () => {
    expect(parseCliArgs(["--offline", "-m", "claude-opus-4-5", "--thinking", "high", "-y", "--trace", "t.jsonl", "--inspect", "--otel", "-C", "src", "hi"])).toEqual({
      kind: "run",
      options: { prompt: "hi", offline: true, model: "claude-opus-4-5", thinking: "high", yes: true, trace: "t.jsonl", inspect: true, otel: true, cwd: "src", ...RECOVERY_DEFAULTS },
    });
    expect(parseCliArgs(["--model=claude-haiku-4-5", "--", "--not-a-flag"])).toMatchObject({
      kind: "run",
      options: { model: "claude-haiku-4-5", prompt: "--not-a-flag" },
    });
  });

  it("help and version", () => {
    expect(parseCliArgs(["--help"])).toEqual({ kind: "help" });
    expect(parseCliArgs(["-h", "--bogus"])).toEqual({ kind: "error", message: "Unknown option --bogus." });
    expect(parseCliArgs(["-v"])).toEqual({ kind: "version" });
  });

  it.each([
    [["--bogus"], "Unknown option --bogus."],
    [["-x"], "Unknown option -x."],
    [["--trace"], "Option --trace needs a value."],
    [["--model", "--offline"], "Option --model needs a value."],
    [["--thinking", "loud"], 'Unknown thinking level "loud" (one of: off, minimal, low, medium, high, xhigh, max).'],
  ])("%j is an error: %s", (argv, message) => {
    expect(parseCliArgs(argv)).toEqual({ kind: "error", message });
  });

  it.each([
    [["--model"], "Option --model needs a value."],
    [["-m"], "Option -m needs a value."],
    [["hi", "--model"], "Option --model needs a value."],
    [["--model", "--offline"], "Option --model needs a value."],
    [["-m", "--offline"], "Option -m needs a value."],
    [["--model="], "Option --model needs a value."],
    [["-C"], "Option -C needs a value."],
    [["--cwd"], "Option --cwd needs a value."],
  ])("issue 16: the option is named as typed: %j", (argv, message) => {
    expect(parseCliArgs(argv)).toEqual({ kind: "error", message });
  });
});

describe("R63: --max-turns and --max-cost", () => {
  it("R63: the budget flags parse to positive numbers, and anything else is a clear error", () => {
    expect(parseCliArgs(["--max-turns", "3", "--max-cost", "0.5", "hi"])).toMatchObject({ kind: "run", options: { maxTurns: 3, maxCostUsd: 0.5 } });
    expect(parseCliArgs(["--max-turns", "1.5"])).toEqual({ kind: "error", message: 'Option --max-turns needs a positive whole number (got "1.5").' });
    expect(parseCliArgs(["--max-cost", "-1"])).toMatchObject({ kind: "error" });
    expect(parseCliArgs(["--max-cost", "abc"])).toEqual({ kind: "error", message: 'Option --max-cost needs a positive number (got "abc").' });
  });
});

describe("issue 17 item 7: recovery flags (R60, R61, R67)", () => {
  const options = (argv: string[]) => {
    const parsed = parseCliArgs(argv);
    if (parsed.kind !== "run") throw new Error(`not a run: ${JSON.stringify(parsed)}`);
    return parsed.options;
  };

  it("R60, R61, R67: retries, output-limit recovery and a 5 s abort grace are on by default", () => {
    expect(DEFAULT_ABORT_GRACE_MS).toBe(5000);
    expect(options(["hi"])).toMatchObject({ retry: true, outputLimitRecovery: true, abortGraceMs: 5000 });
    expect(options(["hi"])).not.toHaveProperty("maxAttempts");
  });

  it("R60, R61, R67: each is turned off by its --no- flag", () => {
    const off = options(["--no-retry", "--no-output-recovery", "--no-abort-grace", "hi"]);
    expect(off).toMatchObject({ retry: false, outputLimitRecovery: false });
    expect(off).not.toHaveProperty("abortGraceMs");
  });

  it("R60, R67: --max-attempts and --abort-grace-ms tune them", () => {
    expect(options(["--max-attempts", "3", "--abort-grace-ms", "250", "hi"])).toMatchObject({ retry: true, maxAttempts: 3, abortGraceMs: 250 });
    expect(options(["--abort-grace-ms=0", "hi"])).toMatchObject({ abortGraceMs: 0 });
    expect(options(["--max-attempts", "1", "hi"])).toMatchObject({ maxAttempts: 1 });
  });

  it.each([
    [["--max-attempts", "0"], 'Option --max-attempts needs a positive whole number (got "0").'],
    [["--max-attempts", "2.5"], 'Option --max-attempts needs a positive whole number (got "2.5").'],
    [["--max-attempts=many"], 'Option --max-attempts needs a positive whole number (got "many").'],
    // A negative number after a number option is its (bad) value, named, not a missing one.
    [["--abort-grace-ms", "-5"], 'Option --abort-grace-ms needs a whole number of milliseconds (0 or more) (got "-5").'],
    [["--max-turns", "-1", "hi"], 'Option --max-turns needs a positive whole number (got "-1").'],
    [["--max-cost", "-0.5"], 'Option --max-cost needs a positive number (got "-0.5").'],
    [["--abort-grace-ms", "--offline"], "Option --abort-grace-ms needs a value."],
    [["--abort-grace-ms=-5"], 'Option --abort-grace-ms needs a whole number of milliseconds (0 or more) (got "-5").'],
    [["--abort-grace-ms", "1.5"], 'Option --abort-grace-ms needs a whole number of milliseconds (0 or more) (got "1.5").'],
    [["--abort-grace-ms"], "Option --abort-grace-ms needs a value."],
    [["--no-retry", "--max-attempts", "3"], "Options --no-retry and --max-attempts contradict each other; give one."],
    [["--abort-grace-ms", "100", "--no-abort-grace"], "Options --no-abort-grace and --abort-grace-ms contradict each other; give one."],
    [["--no-retry=yes"], "Option --no-retry takes no value."],
    [["--compact-at", "0"], 'Option --compact-at needs a positive whole number (got "0").'],
    [["--compact-at", "1e3.5"], 'Option --compact-at needs a positive whole number (got "1e3.5").'],
    [["--compact-at"], "Option --compact-at needs a value."],
    [["--no-compact", "--compact-at", "50000"], "Options --no-compact and --compact-at contradict each other; give one."],
    [["--no-compact=1"], "Option --no-compact takes no value."],
    [["--offline=no"], "Option --offline takes no value."],
  ])("issue 17 item 7: %j is an error: %s", (argv, message) => {
    expect(parseCliArgs(argv)).toEqual({ kind: "error", message });
  });
});

describe("issue 17 item 7: compaction flags (R62)", () => {
  const options = (argv: string[]) => {
    const parsed = parseCliArgs(argv);
    if (parsed.kind !== "run") throw new Error(`not a run: ${JSON.stringify(parsed)}`);
    return parsed.options;
  };

  it("R62: compaction on overflow is on by default, proactive compaction off", () => {
    expect(options(["hi"])).toMatchObject({ compact: true });
    expect(options(["hi"])).not.toHaveProperty("compactAtTokens");
  });

  it("R62: --no-compact turns it off; --compact-at TOKENS adds the proactive threshold", () => {
    expect(options(["--no-compact", "hi"])).toMatchObject({ compact: false });
    expect(options(["--compact-at", "50000", "hi"])).toMatchObject({ compact: true, compactAtTokens: 50_000 });
    expect(options(["--compact-at=120000", "hi"])).toMatchObject({ compactAtTokens: 120_000 });
  });

  it("R70: tools start while the model streams by default; --no-streaming-tools turns it off", () => {
    expect(options(["hi"])).toMatchObject({ streamingTools: true });
    expect(options(["--no-streaming-tools", "hi"])).toMatchObject({ streamingTools: false });
  });

  it("issue 20 item 5: --resume takes an optional id (the next word unless it is an option; last: the last session), --no-save, --sessions", () => {
    const options = (argv: string[]) => (parseCliArgs(argv) as unknown as { options: Record<string, unknown> }).options;
    expect(options(["--resume"])).toMatchObject({ resume: "", save: true });
    expect(options(["--resume", "--offline"])).toMatchObject({ resume: "", offline: true });
    expect(options(["--resume", "20261201-150300-9f3a", "go on"])).toMatchObject({ resume: "20261201-150300-9f3a", prompt: "go on" });
    expect(options(["--resume", "last", "go on"])).toMatchObject({ resume: "", prompt: "go on" });
    expect(options(["--resume=abc"])).toMatchObject({ resume: "abc" });
    expect(options(["--", "--resume"])).toMatchObject({ prompt: "--resume" });
    expect(options(["--no-save"])).toMatchObject({ save: false });
    expect(options(["--sessions"])).toMatchObject({ sessions: true });
    expect(options([])).not.toHaveProperty("resume");
    expect(parseCliArgs(["--no-save", "--resume", "x"])).toEqual({ kind: "error", message: "Options --no-save and --resume contradict each other; give one." });
  });
});
