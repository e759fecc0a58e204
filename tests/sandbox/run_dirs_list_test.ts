// The list of run directories set with PENGUIN_RUN_DIR (`<default run dir>/run-dirs`, read by
// every plan, which hides each one, and by the process budget, which counts each one's ledger)
// keeps every directory that still exists. Attack round 17 bounded L4, L4b: it kept the last
// 1024, so after 1024 others a penguin's run directory was no longer hidden from other
// sessions (the model read and wrote its stand-in records) and its budget was not counted.
// Run in a private /tmp (bubblewrap), so the machine's own list is not touched.
import assert from "node:assert/strict";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";

const REGISTRY = new URL("../../lib/sandbox/_standin_registry.ts", import.meta.url).href;

Deno.test({
  name: "a run directory stays noted after 1,100 others were noted",
  ignore: !bwrap,
  fn: async () => {
    const uid = Deno.uid();
    const script = [
      "set -e",
      "mkdir -p /tmp/ra",
      // A notes its run directory (creating the default one and the list).
      `PENGUIN_RUN_DIR=/tmp/ra "$DENO" eval 'import { privateRunDir } from "${REGISTRY}"; await privateRunDir();'`,
      `L=/tmp/penguin-${uid}/run-dirs`,
      // 1,100 more, as as many penguins with their own PENGUIN_RUN_DIR would leave the list.
      "for i in $(seq 1 1100); do mkdir -p /tmp/o/$i; echo /tmp/o/$i; done >> $L",
      "mkdir -p /tmp/rb",
      `PENGUIN_RUN_DIR=/tmp/rb "$DENO" eval 'import { privateRunDirs } from "${REGISTRY}"; ` +
      `const all = await privateRunDirs(); console.log(all.includes("/tmp/ra"), all.length);'`,
      'grep -c "^/tmp/ra$" $L',
    ].join("\n");
    const out = await new Deno.Command("bwrap", {
      args: ["--dev-bind", "/", "/", "--tmpfs", "/tmp", "bash", "-c", script],
      env: { DENO: Deno.execPath() },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr) + text);
    const [seen, count, noted] = text.trim().split(/\s+/);
    assert.equal(seen, "true", "/tmp/ra is among the run directories every plan hides");
    assert.ok(Number(count) >= 1102, `${count} run directories`);
    assert.equal(noted, "1", "/tmp/ra is still in the list");
  },
});
