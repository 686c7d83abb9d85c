import type { AgentTool } from "../types.js";
import { RestoreError } from "./restore-error.js";
import { AgentInputError } from "../boundary/errors.js";
import { keyedToolDecl } from "../transcript/index.js";
import { toolDeclaration } from "../tools/index.js";
import type { ToolSetData } from "../../machines/run.types.js";

/**
 * The run's executable tools (`context.tools`): functions stay here, in the runtime; the machine
 * sees the plain `ToolSetData` (declarations and the names that force a sequential batch).
 */
export class ToolRegistry {
  private byName = new Map<string, AgentTool>();
  private current: AgentTool[] = [];
  private plain: ToolSetData = { tools: [], sequentialTools: [], siblingCancellingTools: [] };

  /**
   * `answerTool` (SPEC R100): the run's final-answer tool, always part of the set (after the
   * caller's tools; a hook's replacement set keeps it); no other tool may have its name.
   */
  constructor(
    tools: readonly AgentTool[] | undefined,
    private readonly answerTool?: AgentTool,
  ) {
    const clash = answerTool && tools?.find((tool) => tool.name === answerTool.name);
    if (clash) throw new AgentInputError("config.output.toolName", `the final-answer tool's name "${answerTool.name}" is taken by one of the tools (set output.toolName)`);
    this.replace(tools ?? []);
  }

  get list(): AgentTool[] {
    return this.current;
  }

  get data(): ToolSetData {
    return this.plain;
  }

  /** The first tool with that name, as the model's call resolves it. */
  find(name: string): AgentTool | undefined {
    return this.byName.get(name);
  }

  /**
   * R13: a restored run's tool set, by the names its snapshot holds, resolved from `available`
   * (the provided tools, including any a hook installed). A name nobody provides is a restore error.
   */
  restore(names: readonly string[], available: readonly AgentTool[]): void {
    const byName = new Map<string, AgentTool>();
    for (const tool of this.answerTool ? [...available, this.answerTool] : available) if (!byName.has(tool.name)) byName.set(tool.name, tool);
    const missing = names.filter((name) => !byName.has(name));
    if (missing.length > 0) {
      throw new RestoreError(`cannot restore the run: its snapshot names tool(s) ${missing.join(", ")} that the provided tools do not include`);
    }
    this.replace(names.map((name) => byName.get(name)!));
  }

  replace(tools: readonly AgentTool[]): ToolSetData {
    const answer = this.answerTool;
    this.current = answer && !tools.includes(answer) ? [...tools.filter((tool) => tool.name !== answer.name), answer] : tools.slice();
    this.byName = new Map();
    for (const tool of this.current) if (!this.byName.has(tool.name)) this.byName.set(tool.name, tool);
    this.plain = {
      tools: this.current.map((tool) => keyedToolDecl(toolDeclaration(tool))),
      sequentialTools: this.current.filter((tool) => tool.executionMode === "sequential").map((tool) => tool.name),
      siblingCancellingTools: this.current.filter((tool) => tool.cancelSiblingsOnError === true).map((tool) => tool.name),
    };
    return this.plain;
  }
}
