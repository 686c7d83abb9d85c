import { describe, expect, it } from "vitest";
import { parseCliArgs } from "../../src/node/cli/args.js";

describe("argument parsing", () => {
  it("a one-shot prompt from the positional words, defaults for the rest", () => {
    expect(parseCliArgs(["find", "the", "TODOs"])).toEqual({
      kind: "run",
      options: { prompt: "find the TODOs", offline: false, thinking: "off", yes: false, inspect: false },
    });
  });

  it("no prompt: the interactive session", () => {
    expect(parseCliArgs([])).toEqual({ kind: "run", options: { offline: false, thinking: "off", yes: false, inspect: false } });
  });

  it("every option, long and short", () => {
    expect(parseCliArgs(["--offline", "-m", "claude-opus-4-5", "--thinking", "high", "-y", "--trace", "t.jsonl", "--inspect", "-C", "src", "hi"])).toEqual({
      kind: "run",
      options: { prompt: "hi", offline: true, model: "claude-opus-4-5", thinking: "high", yes: true, trace: "t.jsonl", inspect: true, cwd: "src" },
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
