// What the sandbox probe starts: `bwrap --version` only when its answer is shown.
import assert from "node:assert/strict";
import { join } from "node:path";
import { evalInRunDir } from "./_run_dir_eval.ts";
import { withTempDir } from "../support/roots.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";

const DETECT = JSON.stringify(new URL("../../lib/sandbox/detect.ts", import.meta.url).href);

/** A bubblewrap that notes each of its runs (its first argument) in `log`, then runs the real one. */
async function countingBwrap(dir: string, log: string): Promise<string> {
  const fake = join(dir, "bwrap");
  await Deno.writeTextFile(
    fake,
    `#!/bin/bash\nprintf '%s\\n' "\${1:-none}" >>${
      JSON.stringify(log)
    }\nexec /usr/bin/bwrap "$@"\n`,
  );
  await Deno.chmod(fake, 0o755);
  return fake;
}

async function runs(log: string): Promise<string[]> {
  const text = await Deno.readTextFile(log).catch(() => "");
  return text.split("\n").filter((l) => l !== "");
}

Deno.test({
  name: "a command's probe does not run bwrap --version; sandbox check does and shows it",
  ignore: !bwrap,
  fn: () =>
    withTempDir("penguin-probe-starts-", async (dir) => {
      const log = join(dir, "runs.log");
      const fake = await countingBwrap(dir, log);
      const run = join(dir, "run");
      const plain = await evalInRunDir(
        `import { detectSandbox } from ${DETECT};
        const r = await detectSandbox({ bwrapPath: ${JSON.stringify(fake)} });
        console.log(JSON.stringify(r.checks.find((c) => c.name === "bubblewrap")));
        if (!r.usable) throw new Error(r.failure);`,
        run,
      );
      assert.deepEqual(JSON.parse(plain), { name: "bubblewrap", status: "ok", detail: fake });
      const first = await runs(log);
      assert.ok(first.length >= 1, "the probe started a sandbox");
      assert.ok(!first.includes("--version"), first.join(", "));

      const shown = await evalInRunDir(
        `import { detectSandbox } from ${DETECT};
        const r = await detectSandbox({ bwrapPath: ${JSON.stringify(fake)}, version: true });
        console.log(r.checks.find((c) => c.name === "bubblewrap").detail);`,
        run,
      );
      assert.match(shown, /\(bubblewrap \d+\.\d+/);
      assert.ok((await runs(log)).slice(first.length).includes("--version"));
    }),
});
