// The command tool tests again, as in a session: stand-ins kept, so every exec_command runs in a
// sandbox kept for the session (lib/sandbox/_pool.ts) instead of one of its own.
import { keepStandIns } from "../../lib/sandbox/_placeholders.ts";
import { useTestRunDir } from "../support/run_dir.ts";
import { poolFacts } from "../../lib/sandbox/_pool.ts";
import assert from "node:assert/strict";

useTestRunDir();
keepStandIns();

await import("./command_exec_test.ts");
await import("./command_input_test.ts");
await import("./command_kill_test.ts");

Deno.test("the command tests above ran in kept sandboxes", () => {
  // Each test has a workspace of its own, so a sandbox of its own: one per test at least.
  const facts = poolFacts();
  assert.ok(facts.started >= 10, JSON.stringify(facts));
  assert.ok(facts.commands >= facts.started, JSON.stringify(facts));
});
