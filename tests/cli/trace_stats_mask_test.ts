// Attack round 20 mcpsecrets #1: `trace stats` showed a value that became a vault secret after
// the trace was written (in a tool name, an error text), where `trace show` and the exports mask
// it with the secrets known now.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { setVault } from "../support/secrets.ts";
import { sid, traceBuilder, withTempDir } from "../inspect/_support.ts";

const VALUE = "vlt-9c1e44b7a05d2f38";

Deno.test("trace stats masks what the traces hold with the secrets known now", async () => {
  await withTempDir(async (dir) => {
    const root = join(dir, "data");
    await setVault(root, "LATE", VALUE);
    const id = sid("5a7b9c1d");
    const trace = join(dir, `${id}_001.jsonl`);
    const b = traceBuilder(id).meta().tools().user("go").begin()
      .call(`deploy_${VALUE}`, {}, "c1").usage(1, 1, 1).end().output("c1", "ok");
    await Deno.writeTextFile(trace, b.jsonl());
    for (const extra of [[], ["--json"]]) {
      const r = await runCli(["--root", root, "trace", "stats", trace, "--by", "tool", ...extra]);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(!(r.stdout + r.stderr).includes(VALUE.slice(4, 14)), r.stdout);
      assert.match(r.stdout, /deploy_\[redacted:vault:LATE\]/);
    }
  });
});
