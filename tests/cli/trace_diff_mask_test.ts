// `penguin trace diff` shows the current secrets masked, as every other trace view does (issue
// 26, attack pass final13-secimp row 40): a value a session printed before it was put in the
// vault was masked by `trace show` and printed in clear by `trace diff`.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { assertNoPieceOf, setVault } from "../support/secrets.ts";
import { sid, traceBuilder, tracesDay, withTempDir } from "../inspect/_support.ts";

const W = "Wm3Tn8Rk5Pq2Zx7Bv4Lc9Hd6Fy1Gs0J";

Deno.test("trace diff masks a value put in the vault after the sessions printed it", async () => {
  await withTempDir(async (root) => {
    const a = sid("aaaa1111");
    const b = sid("bbbb2222");
    const day = await tracesDay(root);
    const session = (id: string, answer: string) =>
      traceBuilder(id).meta().tools().user(`echo ${W}`)
        .begin().call("exec_command", { cmd: `echo ${W}` }, "call_1").approve("call_1")
        .usage(1, 2, 3).end().output("call_1", `D6:${W}\n`)
        .begin().text(answer).usage(1, 2, 3).end();
    // They diverge at the answer, which holds the value too on one side.
    await Deno.writeTextFile(join(day, `${a}_001.jsonl`), session(a, `D6:${W}`).jsonl());
    await Deno.writeTextFile(join(day, `${b}_001.jsonl`), session(b, "nothing").jsonl());
    const before = await runCli(["trace", "diff", "--root", root, a, b]);
    assert.equal(before.code, 1, before.stderr);
    assert.ok(before.stdout.includes(`D6:${W}`), "in clear while it is no secret");

    await setVault(root, "LATE_W", W);
    for (const extra of [[], ["--json"]]) {
      const r = await runCli(["trace", "diff", "--root", root, ...extra, a, b]);
      assert.equal(r.code, 1, r.stderr);
      assertNoPieceOf(r.stdout + r.stderr, [W], `trace diff ${extra.join(" ")}`);
      assert.ok(r.stdout.includes("LATE_W"), r.stdout);
    }
  });
});
