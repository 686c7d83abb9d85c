/** Issue 21 item 4: `npm run example:restate` starts the server, runs a session and says where the UI is. */
import { spawnSync } from "node:child_process";
import { expect, it } from "vitest";

it("issue 21 item 4: the Restate example runs a session offline and prints the UI's address", () => {
  const env = { ...process.env };
  delete env.ANTHROPIC_API_KEY;
  const result = spawnSync(process.execPath, ["--import", "tsx", "scripts/example-restate.ts", "--exit", "summarize this repository"], { env, encoding: "utf8", timeout: 60_000 });
  expect(result.stderr).not.toMatch(/Error/);
  expect(result.status).toBe(0);
  expect(result.stdout).toMatch(/UI http:\/\/127\.0\.0\.1:\d+\/ui\//);
  expect(result.stdout).toMatch(/→ list_files/);
  expect(result.stdout).toMatch(/\(run ended: completed\)/);
  expect(result.stdout).toMatch(/session example-\w+: \d+ messages, \d+ events in the object's state/);
  // R83 across workers: the session's journal replays offline to its event log.
  expect(result.stdout).toMatch(/replayed offline from \d+ journal records: \d+ events, identical to the session's log/);
}, 90_000);
