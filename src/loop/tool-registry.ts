import type { AgentTool } from "../types.js";
import { keyedToolDecl } from "../transcript/index.js";
import { toolDeclaration } from "../tools/index.js";
import type { ToolSetData } from "./run-context.js";

/**
 * The run's executable tools (`context.tools`): functions stay here, in the runtime; the machine
 * sees the plain `ToolSetData` (declarations and the names that force a sequential batch).
 */
export class ToolRegistry {
  private byName = new Map<string, AgentTool>();
  private current: AgentTool[] = [];
  private plain: ToolSetData = { tools: [], sequentialTools: [] };

  constructor(tools: readonly AgentTool[] | undefined) {
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

  replace(tools: readonly AgentTool[]): ToolSetData {
    this.current = tools.slice();
    this.byName = new Map();
    for (const tool of this.current) if (!this.byName.has(tool.name)) this.byName.set(tool.name, tool);
    this.plain = {
      tools: this.current.map((tool) => keyedToolDecl(toolDeclaration(tool))),
      sequentialTools: this.current.filter((tool) => tool.executionMode === "sequential").map((tool) => tool.name),
    };
    return this.plain;
  }
}
