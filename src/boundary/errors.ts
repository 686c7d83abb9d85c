/**
 * The typed errors of the library boundary. Each names the field that was wrong, so an app (or a
 * model reading a tool result) can tell which input to fix. All extend `TypeError`: the value
 * handed in had the wrong shape.
 */

/** An argument of a public call (`agentLoop`, `Agent.prompt`, `defineTool`, …) is malformed. */
export class AgentInputError extends TypeError {
  override name = "AgentInputError";
  /** The argument or field path, e.g. `signal`, `context.tools[2].execute`, `model.cost`. */
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/** A hook returned (or resolved) a value outside its contract; the run fails cleanly (R56). */
export class HookResultError extends TypeError {
  override name = "HookResultError";
  /** The hook, e.g. `prepareNextTurn`. */
  readonly hook: string;
  /** The field of its result, e.g. `model` or `messages[0]` (`result` for the value itself). */
  readonly field: string;
  constructor(hook: string, field: string, message: string) {
    super(message);
    this.hook = hook;
    this.field = field;
  }
}

/** A tool's `execute` resolved a malformed result; the call gets an error result naming it. */
export class ToolResultError extends TypeError {
  override name = "ToolResultError";
  readonly tool: string;
  /** The field of the result, e.g. `content[0].text`. */
  readonly field: string;
  constructor(tool: string, field: string, message: string) {
    super(message);
    this.tool = tool;
    this.field = field;
  }
}
