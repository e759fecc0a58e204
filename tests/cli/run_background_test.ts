// `penguin run` waits for subagents started with run_in_background and lets the
// model read their reports before it exits.
import assert from "node:assert/strict";
import { type RecordedRequest, turn } from "../support/model_server.ts";
import { inRoot, readWatching, spawnCli } from "../support/cli.ts";
import {
  childAnswerAfter,
  startChildInBackground,
  turnOf,
  userTexts,
  whose,
} from "../agent/_subagent_support.ts";
import { withModelRoot } from "../support/roots.ts";

Deno.test("penguin run waits for a background subagent and feeds its report to the model before exiting", async () => {
  const { promise: parentWaits, resolve: sawWaiting } = Promise.withResolvers<void>();
  const handler = async (req: RecordedRequest) => {
    // The child answers only once penguin says it waits for it (its first task has ended).
    if (whose(req) === "child") return await childAnswerAfter(parentWaits);
    const t = turnOf(req);
    if (t === 0) return startChildInBackground();
    if (t === 1) return turn.text("Started the child; waiting for its report.");
    return turn.text("The child reported 42.");
  };
  await withModelRoot({ handler, maxRequests: 10 }, async (sb, server) => {
    const child = spawnCli(inRoot(sb, "run", "-m", "[[parent]] delegate"));
    const stdout = new Response(child.stdout).text();
    const stderr = await readWatching(child.stderr, "[background] waiting for", sawWaiting);
    const r = { code: (await child.status).code, stdout: await stdout, stderr };
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /\[background\] waiting for 1 background subagent\(s\) to finish/);
    const parentRequests = server.requests.filter((q) => whose(q) === "parent");
    assert.equal(parentRequests.length, 3, "one more round after the report");
    const last = userTexts(parentRequests[2]!).join("\n");
    assert.match(last, /\[background_task_done\]/);
    assert.match(last, /child result: 42/);
    assert.match(r.stdout, /The child reported 42\./);
  });
});
