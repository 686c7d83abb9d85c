/** R90: settings the Restate binding cannot journal are refused up front, with a typed error. */
import { describe, expect, it } from "vitest";

describe("R90: what the Restate binding refuses", () => {
  it("R90, R70: streaming tool execution is a typed error naming the setting", async () => {
    const { agentSessionObjects } = await import("../../src/restate/session-object.js");
    const { scriptedModel, scriptedStreamFn } = await import("../../src/testing/index.js");
    const { defaultConvertToLlm } = await import("../../src/agent/loop-config.js");
    const make = () => agentSessionObjects({ streamFn: scriptedStreamFn([]), config: { model: scriptedModel, convertToLlm: defaultConvertToLlm, streamingToolExecution: true } });
    expect(make).toThrow(expect.objectContaining({ name: "AgentInputError", field: "config.streamingToolExecution" }));
  });
});
