// `penguin sessions import` reads what it is given with a bound: a session file from elsewhere may
// be huge or sparse (red team Z8: a 1 GiB sparse file took the import to 1.1 GB).
import assert from "node:assert/strict";
import { join } from "node:path";
import { withRoot, withTempDir } from "../support/roots.ts";
import { runCli } from "../support/cli.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";

const MAX_PEAK = 300 * 1000 * 1000;

async function sparse(path: string, bytes: number): Promise<void> {
  using f = await Deno.open(path, { write: true, create: true });
  await f.truncate(bytes);
}

Deno.test({
  name: "sessions import of a 1 GiB sparse file refuses its one huge record unread, peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await withRoot(async (root) => {
      const file = join(root, "..", `huge-${crypto.randomUUID()}.jsonl`);
      await sparse(file, 1024 ** 3);
      try {
        const r = await runCliPeak(["--root", root, "sessions", "import", file], root);
        assert.equal(r.code, 1, r.stderr);
        assert.match(r.stdout + r.stderr, /a record of 1 GiB, over the 64 MiB a record may hold/);
        assert.ok(r.peakBytes <= MAX_PEAK, `peak ${r.peakBytes}`);
      } finally {
        await Deno.remove(file);
      }
    });
  },
});

Deno.test({
  name:
    "sessions import --from codex of a file over 64 MiB refuses it before reading, peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await withRoot(async (root) => {
      const file = join(root, "..", `huge-${crypto.randomUUID()}.jsonl`);
      await sparse(file, 65 * 1024 ** 2);
      try {
        const r = await runCliPeak(
          ["--root", root, "sessions", "import", "--from", "codex", file],
          root,
        );
        assert.equal(r.code, 1, r.stderr);
        assert.match(r.stdout + r.stderr, /holds 65 MiB; a session file may hold at most 64 MiB/);
        assert.ok(r.peakBytes <= MAX_PEAK, `peak ${r.peakBytes}`);
      } finally {
        await Deno.remove(file);
      }
    });
  },
});

Deno.test("sessions import refuses a FIFO and a link to a device instead of reading them", async () => {
  await withTempDir("penguin-import-special-", async (dir) => {
    const fifo = join(dir, "s.jsonl");
    const zero = join(dir, "z.jsonl");
    await new Deno.Command("mkfifo", { args: [fifo] }).output();
    await Deno.symlink("/dev/zero", zero);
    for (const file of [fifo, zero]) {
      // A FIFO without a writer blocks an open; /dev/zero never ends: either would hang here.
      const r = await runCli([
        "--root",
        join(dir, "root"),
        "sessions",
        "import",
        file,
        "--workspace",
        dir,
      ]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stdout + r.stderr, new RegExp(`"${file}" is not a regular file`));
    }
  });
});
