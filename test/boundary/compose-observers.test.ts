/**
 * The observer seam takes several observers at once (the trace recorder, the Stately inspector and
 * the OpenTelemetry observer): each gets every inspection event, each is isolated from the others'
 * failures, and an attachable observer that attaches nothing leaves the run without an observer.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { InspectionEvent } from "xstate";
import { Agent, TraceOrigins, composeObservers, runAgentLoop, scriptedModel, scriptedStreamFn, text, toolCall, type ObservedRoot } from "../../src/index.js";
import { baseConfig, tool, user } from "../loop/helpers.js";

const script = () => scriptedStreamFn([{ content: [toolCall("look", {}, "a")] }, { content: [text("done")] }]);
const kinds = (events: InspectionEvent[]) => events.map((event) => event.type);

describe("observers compose", () => {
  const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
  afterEach(() => warn.mockClear());

  it("runAgentLoop: a list of observers; one throws on every event, the others see what a lone observer sees", async () => {
    const alone: InspectionEvent[] = [];
    await runAgentLoop([user("go")], { messages: [], tools: [tool("look")] }, baseConfig(), () => {}, undefined, script(), { inspect: (event) => alone.push(event) });
    const first: InspectionEvent[] = [];
    const third: InspectionEvent[] = [];
    const output = await runAgentLoop([user("go")], { messages: [], tools: [tool("look")] }, baseConfig(), () => {}, undefined, script(), {
      inspect: [
        (event) => first.push(event),
        () => {
          throw new Error("observer bug");
        },
        { next: (event) => third.push(event) },
      ],
    });
    expect(output.map((m) => m.role)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
    expect(kinds(first)).toEqual(kinds(alone));
    expect(kinds(third)).toEqual(kinds(alone));
    expect(warn.mock.calls).toEqual([[expect.stringContaining("the inspect observer threw (observer bug)")]]);
  });

  it("an attachable observer is asked per run; attaching nothing adds no observer, a throwing attach is reported and skipped", async () => {
    const roots: ObservedRoot[] = [];
    const seen: InspectionEvent[] = [];
    const output = await runAgentLoop([user("go")], { messages: [], tools: [tool("look")] }, baseConfig(), () => {}, undefined, script(), {
      inspect: [
        { attach: (root) => void roots.push(root) },
        {
          attach: () => {
            throw new Error("attach bug");
          },
        },
        { attach: () => (event) => seen.push(event) },
      ],
    });
    expect(output.at(-1)?.role).toBe("assistant");
    expect(roots).toEqual([{ kind: "run", origins: expect.any(TraceOrigins) }]);
    expect(seen.length).toBeGreaterThan(10);
    expect(warn.mock.calls).toEqual([[expect.stringContaining("failed to attach (attach bug)")]]);
  });

  it("the Agent attaches once for its session, telling its session id; with nothing attached its actor is not pinned", async () => {
    const roots: ObservedRoot[] = [];
    const agent = new Agent({ initialState: { model: scriptedModel, tools: [tool("look")] }, streamFn: script(), sessionId: "conv-1", inspect: { attach: (root) => void roots.push(root) } });
    await agent.prompt("go");
    expect(roots).toEqual([{ kind: "session", sessionId: "conv-1", origins: expect.any(TraceOrigins) }]);
    expect((agent.state.messages.at(-1) as { content: { text: string }[] }).content[0].text).toBe("done");
  });

  it("composeObservers: one XState observer for createActor, each part isolated", () => {
    const seen: string[] = [];
    const observer = composeObservers(
      () => {
        throw new Error("first bug");
      },
      (event) => seen.push(event.type),
    );
    observer.next({ type: "@xstate.event" } as InspectionEvent);
    observer.next({ type: "@xstate.snapshot" } as InspectionEvent);
    expect(seen).toEqual(["@xstate.event", "@xstate.snapshot"]);
    expect(warn).toHaveBeenCalledTimes(1);
  });
});
