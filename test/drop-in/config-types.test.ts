/**
 * Issue 16, "AgentLoopConfig typos fail to compile": compiles fixtures/config-types.ts with the
 * project's compiler options, as is (no error in the file) and with its `@ts-expect-error`
 * comments removed (an error on exactly each marked line).
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import ts from "typescript";

const FIXTURE = fileURLToPath(new URL("./fixtures/config-types.ts", import.meta.url));
const TSCONFIG = fileURLToPath(new URL("../../tsconfig.json", import.meta.url));
const MARK = "// @ts-expect-error";

function compilerOptions(): ts.CompilerOptions {
  const { config } = ts.readConfigFile(TSCONFIG, ts.sys.readFile);
  return { ...ts.parseJsonConfigFileContent(config, ts.sys, fileURLToPath(new URL("../../", import.meta.url))).options, noEmit: true };
}

/** Error lines (1-based) of the fixture when its text is `text`. */
function errorLines(text: string, options: ts.CompilerOptions, oldProgram?: ts.Program): { lines: number[]; messages: string[]; program: ts.Program } {
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, version, ...rest) =>
    fileName === FIXTURE ? ts.createSourceFile(fileName, text, version) : getSourceFile(fileName, version, ...rest);
  const program = ts.createProgram({ rootNames: [FIXTURE], options, host, oldProgram });
  const file = program.getSourceFile(FIXTURE)!;
  const diagnostics = [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
  return {
    lines: diagnostics.map((d) => file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1),
    messages: diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n")),
    program,
  };
}

describe("issue 16: AgentLoopConfig is closed, pi's stream options compile, providers extend by merging", () => {
  it("the fixture compiles as is, and each @ts-expect-error line fails without its comment", { timeout: 60_000 }, () => {
    const options = compilerOptions();
    const source = ts.sys.readFile(FIXTURE)!;
    const asIs = errorLines(source, options);
    expect(asIs.messages).toEqual([]);

    const lines = source.split("\n");
    // The line after each marker, numbered as in the stripped text (markers replaced by blank lines).
    const marked = lines.flatMap((line, index) => (line.trim().startsWith(MARK) ? [index + 2] : []));
    expect(marked.length).toBe(8);
    const stripped = lines.map((line) => (line.trim().startsWith(MARK) ? "" : line)).join("\n");
    const without = errorLines(stripped, options, asIs.program);
    expect([...new Set(without.lines)].sort((a, b) => a - b)).toEqual(marked);
    expect(without.messages.join("\n")).toMatch(/beforeToolcall/);
    expect(without.messages.join("\n")).toMatch(/temprature/);
  });
});
