/**
 * An app statechart that embeds agent runs (SPEC R14): a researcher and a critic run in parallel
 * states, then an editor run gets both outputs. Each run is `createAgentRunLogic(...)` invoked like
 * any actor; its input and output are plain data, so the whole team's snapshot persists.
 */
import { assign, setup } from "xstate";
import { createAgentRunLogic, scriptedModel, type AgentMessage, type AgentRunInput, type AgentRunOptions } from "../../src/index.js";

export interface TeamOptions {
  researcher: AgentRunOptions;
  critic: AgentRunOptions;
  editor: AgentRunOptions;
}

const user = (content: string): AgentMessage => ({ role: "user", content, timestamp: 0 });

/** The text of a run's last assistant message. */
export function lastAnswer(messages: readonly AgentMessage[] | null): string {
  const last = [...(messages ?? [])].reverse().find((message) => (message as { role: string }).role === "assistant") as
    | { content: { type: string; text?: string }[] }
    | undefined;
  return last ? last.content.map((block) => block.text ?? "").join("") : "";
}

export function createTeamMachine(options: TeamOptions) {
  return setup({
    types: {
      input: {} as { topic: string },
      context: {} as { topic: string; research: AgentMessage[] | null; critique: AgentMessage[] | null; report: AgentMessage[] | null },
    },
    actors: {
      researcher: createAgentRunLogic(options.researcher),
      critic: createAgentRunLogic(options.critic),
      editor: createAgentRunLogic(options.editor),
    },
  }).createMachine({
    id: "team",
    context: ({ input }) => ({ topic: input.topic, research: null, critique: null, report: null }),
    initial: "working",
    states: {
      // Two runs at once, in one actor system.
      working: {
        type: "parallel",
        states: {
          researching: {
            initial: "running",
            states: {
              running: {
                invoke: {
                  id: "researcher",
                  src: "researcher",
                  input: ({ context }): AgentRunInput => ({ messages: [], prompts: [user(`Research: ${context.topic}`)] }),
                  onDone: { target: "done", actions: assign({ research: ({ event }) => event.output }) },
                },
              },
              done: { type: "final" },
            },
          },
          critiquing: {
            initial: "running",
            states: {
              running: {
                invoke: {
                  id: "critic",
                  src: "critic",
                  input: ({ context }): AgentRunInput => ({ messages: [], prompts: [user(`Find the weak points of: ${context.topic}`)] }),
                  onDone: { target: "done", actions: assign({ critique: ({ event }) => event.output }) },
                },
              },
              done: { type: "final" },
            },
          },
        },
        onDone: "editing",
      },
      // A third run gets both outputs.
      editing: {
        invoke: {
          id: "editor",
          src: "editor",
          input: ({ context }): AgentRunInput => ({
            messages: [],
            prompts: [user(`Write the report.\nResearch: ${lastAnswer(context.research)}\nCritique: ${lastAnswer(context.critique)}`)],
          }),
          onDone: { target: "done", actions: assign({ report: ({ event }) => event.output }) },
        },
      },
      done: { type: "final" },
    },
  });
}

export { scriptedModel };
