/**
 * `xstate-agent-loop/node`: the Node-only parts — tools that work on the working directory and
 * their permission policy. (The terminal agent itself is the package's `bin`, src/node/cli/.)
 */
export * from "./tools/index.js";
