/**
 * The layering rules of src/ and machines/ (docs/architecture.md, "Layers"), checked by
 * `npm run lint:deps` in CI. Type imports count (`tsPreCompilationDeps`): the cycles this project
 * had were made of them, and a checker that drops them saw none.
 */
/** Integrations the core never loads: Node-only code, engines, stores, providers, adapters. */
const INTEGRATIONS = "^src/(node/|inspector/|restate/|store/sqlite/|sqlite\\.ts$|mcp/|otel/|ui-stream/|react/|providers/[^/]+/)";

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "No import cycle, type imports included: a cycle makes every module in it depend on every other.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "machines-import-only-protocol",
      comment: "machines/ are statechart definitions: they import machines/, the dependency-free src/protocol/ and xstate, nothing that runs.",
      severity: "error",
      from: { path: "^machines/" },
      to: { pathNot: "^(machines/|src/protocol/|node_modules/xstate/)" },
    },
    {
      name: "protocol-is-dependency-free",
      comment: "src/protocol/ is plain types and pure functions: it imports only itself (and zod's types, for tool parameters).",
      severity: "error",
      from: { path: "^src/protocol/" },
      to: { pathNot: "^(src/protocol/|node_modules/zod/)" },
    },
    {
      name: "core-does-not-load-integrations",
      comment: "The core (root entry and what it loads) never imports Node-only code, a durable engine, a store engine or a provider: each is its own subpath.",
      severity: "error",
      from: { path: "^(src|machines)/", pathNot: INTEGRATIONS },
      to: { path: INTEGRATIONS },
    },
    {
      name: "not-to-unresolvable",
      comment: "Every import resolves (an unresolved one would pass the rules above unchecked).",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    // `exportsFields`: resolve packages by their `exports` map (subpaths such as `@statelyai/inspect/server`).
    enhancedResolveOptions: { extensions: [".ts", ".js", ".mjs", ".d.mts"], conditionNames: ["import", "types", "default"], exportsFields: ["exports"] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
