/**
 * Issue 21 item 5: the test command starts and stops `restate-server` itself, from node_modules,
 * on loopback, with ports the server picks (so parallel test files never collide).
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { restateServerBinary, startLocalRestateServer } from "../../src/restate/local-server.js";

describe("issue 21 item 5: a local Restate server from node_modules", () => {
  it("starts healthy on 127.0.0.1, serves the admin API and the ingress, and leaves nothing behind", async () => {
    expect(existsSync(restateServerBinary())).toBe(true);
    const server = await startLocalRestateServer({ retryIntervalMs: 50 });
    try {
      expect(server.adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.ingressUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.ingressUrl).not.toBe(server.adminUrl);
      expect((await fetch(`${server.adminUrl}/health`)).status).toBe(200);
      const deployments = (await (await fetch(`${server.adminUrl}/deployments`)).json()) as { deployments: unknown[] };
      expect(deployments.deployments).toEqual([]);
      // The ingress answers (a service that does not exist is a 404, not a refused connection).
      expect((await fetch(`${server.ingressUrl}/nope/handler`, { method: "POST", body: "{}" })).status).toBe(404);
    } finally {
      await server.stop();
    }
    expect(existsSync(server.baseDir)).toBe(false);
    await expect(fetch(`${server.adminUrl}/health`)).rejects.toThrow();
  });

  it("two servers run side by side on different ports", async () => {
    const [a, b] = await Promise.all([startLocalRestateServer(), startLocalRestateServer()]);
    try {
      expect(new Set([a.adminUrl, a.ingressUrl, b.adminUrl, b.ingressUrl]).size).toBe(4);
      expect((await fetch(`${b.adminUrl}/health`)).ok).toBe(true);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("a registration the server refuses is a typed error naming the endpoint", async () => {
    const server = await startLocalRestateServer();
    try {
      await expect(server.registerDeployment("http://127.0.0.1:9")).rejects.toThrow(/registering http:\/\/127\.0\.0\.1:9 failed/);
    } finally {
      await server.stop();
    }
  });
});
