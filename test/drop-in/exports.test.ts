/**
 * Issue 16, "a drop-in replacement": every root export of pi-agent-core 1.6 exists in ours; the
 * test helpers live in `./testing` (still re-exported from the root); the stream proxy's server
 * side in `./proxy`; run internals no longer leak from the root.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as reference from "@earendil-works/pi-agent-core";
import * as root from "../../src/index.js";
import * as testing from "../../src/testing/index.js";
import * as proxy from "../../src/proxy/index.js";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

describe("issue 16: root exports", () => {
  it("the reference's root export names minus ours is empty", () => {
    const ours = new Set(Object.keys(root));
    expect(Object.keys(reference).filter((name) => !ours.has(name))).toEqual([]);
  });

  it("same kinds as the reference: functions are functions, the identity a plain object", () => {
    for (const name of Object.keys(reference) as (keyof typeof reference & keyof typeof root)[]) {
      expect([name, typeof root[name]]).toEqual([name, typeof reference[name]]);
    }
  });

  it("run internals are not exported from the root", () => {
    for (const name of ["createRunImplementations", "createToolCallImplementations"]) expect(Object.keys(root)).not.toContain(name);
  });
});

describe("issue 16: the ./testing and ./proxy subpaths", () => {
  it("./testing has the helpers, the same objects the root re-exports", () => {
    const helpers = ["text", "thinking", "toolCall", "scriptedStreamFn", "scriptedModel", "PushAssistantStream", "emptyUsage", "createAgentTestModel"] as const;
    for (const name of helpers) {
      expect(testing[name]).toBeDefined();
      expect(testing[name]).toBe(root[name]);
    }
  });

  it("./proxy has both sides, and the root's streamProxy is the same client", () => {
    expect(typeof proxy.createStreamProxyHandler).toBe("function");
    expect(proxy.streamProxy).toBe(root.streamProxy);
    expect(proxy.PROXY_STREAM_PATH).toBe("/api/stream");
  });

  it("package.json exports and the build's entry shims agree on every subpath", () => {
    const exports = (JSON.parse(read("package.json")) as { exports: Record<string, { import?: string }> }).exports;
    const shims = read("scripts/entry-shims.mjs");
    for (const [subpath, module] of [
      ["./testing", "./src/testing/index.js"],
      ["./proxy", "./src/proxy/index.js"],
    ] as const) {
      const name = subpath.slice(2);
      expect(exports[subpath]).toEqual({ types: `./dist/${name}.d.ts`, import: `./dist/${name}.js` });
      expect(shims).toContain(`${name}: "${module}"`);
    }
  });
});
