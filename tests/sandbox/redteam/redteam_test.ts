// The red-team suite: every attempt of the table (./_attempts.ts) is made by
// the scripted model through real tool calls of `penguin run`, and each one
// is asserted blocked by looking at the outside world afterwards.
import assert from "node:assert/strict";
import { ATTEMPTS, type Batch, BATCH_SETUP } from "./_attempts.ts";
import { createWorld, type Outcome, runSession, type World } from "./_world.ts";
import { prepareHomeWorkspace } from "./_attempts_home.ts";

const DENIED = "Tool call denied by policy.";
const BATCHES: Batch[] = [
  "files",
  "secrets",
  "harness",
  "bomb",
  "race",
  "home",
  "home-ws",
  "gitconfig",
];

Deno.test("the red-team table has at least 40 distinct attempts", () => {
  const ids = ATTEMPTS.map((a) => a.id);
  assert.equal(new Set(ids).size, ids.length, "attempt ids are unique");
  assert.ok(ATTEMPTS.filter((a) => !a.gap).length >= 40, `${ATTEMPTS.length} attempts`);
});

for (const batch of BATCHES) {
  const attempts = ATTEMPTS.filter((a) => a.batch === batch);
  Deno.test(`red team (${batch}): every attempt is blocked and the harness survives`, async (t) => {
    const world: World = await createWorld();
    try {
      await BATCH_SETUP[batch]?.(world);
      const live = attempts.filter((a) => !a.gap);
      for (const a of live) await a.prepare?.(world);
      // The home-ws batch runs with the fake HOME as its workspace, as a user allowing it would.
      if (batch === "home-ws") {
        await prepareHomeWorkspace(world);
        world.ws = world.home;
      }
      const outcome: Outcome = await runSession(
        world,
        (w) =>
          live.map((a, i) => a.steps(w).map((s, k) => ({ ...s, id: `rt_${batch}_${i}_${k}` }))),
        batch === "home-ws" ? { extraArgs: ["--allow-home-workspace"] } : {},
      );
      await t.step("the session completed and every scripted turn was served", () => {
        assert.equal(
          outcome.code,
          0,
          `${outcome.stderr.slice(-3000)}\nstdout: ${outcome.stdout.slice(-3000)}`,
        );
        assert.equal(outcome.requests, outcome.scripted);
      });
      let escapes = 0;
      for (const [i, a] of live.entries()) {
        await t.step(`${a.category}: ${a.id}`, async () => {
          const outputs = a.steps(world).map((_, k) =>
            outcome.outputs.get(`rt_${batch}_${i}_${k}`)
          );
          // Each step really ran through its tool (the command policy did not stand in for the sandbox).
          outputs.forEach((out, k) => {
            assert.notEqual(out, undefined, `step ${k} has an output`);
            assert.ok(!out!.startsWith(DENIED), `step ${k} was denied by the command policy`);
          });
          try {
            await a.blocked(world, outcome);
          } catch (err) {
            escapes++;
            (err as Error).message += `\ntool outputs:\n${outputs.map((o) => `> ${o}`).join("\n")}`;
            throw err;
          }
        });
      }
      const gaps = attempts.filter((a) => a.gap).length;
      console.log(
        `red team (${batch}): ${live.length} attempts, ${escapes} escapes` +
          (gaps > 0 ? `, ${gaps} known gaps not attempted` : ""),
      );
      for (const a of attempts.filter((a) => a.gap)) {
        await t.step({
          name: `${a.category}: ${a.id} (known gap: ${a.gap})`,
          ignore: true,
          fn() {},
        });
      }
    } finally {
      await world.close();
    }
  });
}
