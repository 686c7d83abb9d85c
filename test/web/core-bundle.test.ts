/**
 * The root entry runs outside Node: bundled for the browser (Vite library mode, browser
 * conditions, every dependency bundled), its import graph reaches no Node built-in module. Vite
 * only warns about those (it swaps in an empty stub), so a plugin records every import of one.
 */
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ensureLibraryBuilt } from "../../scripts/example-web.js";
import { bundleForBrowser, ROOT } from "../support/browser-bundle.js";

describe("the core in a browser bundle", () => {
  beforeAll(async () => {
    await ensureLibraryBuilt();
  }, 180_000);

  it("the detector sees Node built-ins (control: the ./node subpath uses them)", async () => {
    const bundle = await bundleForBrowser(join(ROOT, "dist/src/node/index.js"));
    expect(bundle.builtins.map((found) => found.specifier).some((name) => /^(node:)?(fs|path|child_process)/.test(name))).toBe(true);
  });

  it("the root entry (dist/index.js) imports no Node built-in, directly or through its dependencies", async () => {
    const bundle = await bundleForBrowser(join(ROOT, "dist/index.js"));
    expect(bundle.builtins).toEqual([]);
    expect(bundle.external).toEqual([]);
    // The dependencies were bundled, so their imports were checked too.
    for (const dependency of ["/node_modules/xstate/", "/node_modules/rxjs/", "/node_modules/@cfworker/json-schema/"]) {
      expect(bundle.modules.some((id) => id.includes(dependency)), dependency).toBe(true);
    }
    for (const file of ["dist/src/agent/agent.js", "dist/machines/run/run.machine.js", "dist/machines/session.machine.js"]) {
      expect(bundle.modules, file).toContain(join(ROOT, file));
    }
  });

  it("so does ./inspect, which the browser example uses", async () => {
    const bundle = await bundleForBrowser(join(ROOT, "dist/src/inspect/index.js"));
    expect(bundle.builtins).toEqual([]);
    expect(bundle.external).toEqual([]);
  });

  it("so do ./ui-stream (the route, for Workers and edge runtimes) and ./react (the hooks and createRemoteAgent, in the page)", async () => {
    for (const entry of ["dist/src/ui-stream/index.js", "dist/src/react/index.js"]) {
      const bundle = await bundleForBrowser(join(ROOT, entry));
      expect([entry, bundle.builtins, bundle.external]).toEqual([entry, [], []]);
    }
    const react = await bundleForBrowser(join(ROOT, "dist/src/react/index.js"));
    expect(react.modules).toContain(join(ROOT, "dist/src/react/remote-agent.js"));
  });
});
