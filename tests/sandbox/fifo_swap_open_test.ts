// A command exchanges `penguin.jsonc` (or a `.git` directory) with a FIFO in a tight loop
// (renameat2 RENAME_EXCHANGE): penguin looked at the path (a regular file), then opened it, and a
// FIFO swapped in between held the open until a writer came: the next session there hung (attack
// round 28 E e13). The policy is now read from what was opened without blocking, and the open for
// a lock is bounded. The swapper is a real process doing a fixed number of exchanges; when done it
// opens the FIFO for writing wherever it lies, so an open that did wait ends too (and a read that
// waited then returns no bytes: what the assertions catch).
import assert from "node:assert/strict";
import { join } from "node:path";
import { readWorkspacePolicyBytes } from "../../lib/sandbox/workspace_policy.ts";
import { LockBusyError, openForLock } from "../../lib/sandbox/_lock_open.ts";
import { visibleTempDir } from "./_helpers.ts";
import { readUntil } from "../support/child_lines.ts";

const SWAPPER = `
import ctypes, os, stat, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
print("armed", flush=True)
for _ in range(int(sys.argv[3])): libc.renameat2(-100, a, -100, b, 2)
for n in (a, b):
    if stat.S_ISFIFO(os.lstat(n).st_mode): os.close(os.open(n, os.O_RDWR | os.O_NONBLOCK))
`;

/** Run the swapper on `a` and `b` in `dir`; `each` runs over and over until it is done. */
async function whileSwapping(dir: string, a: string, b: string, each: () => Promise<void>) {
  const child = new Deno.Command("python3", {
    args: ["-c", SWAPPER, a, b, "300000"],
    cwd: dir,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let done = false;
  const status = child.status.finally(() => done = true);
  try {
    assert.match(await readUntil(lines, "armed"), /armed/);
    let tries = 0;
    while (!done || tries === 0) {
      await each();
      tries++;
      // A turn of the event loop (not a pause), so the swapper's exit is seen.
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  } finally {
    await lines.cancel().catch(() => {});
    await status;
  }
}

Deno.test("penguin.jsonc swapped with a FIFO: read as the file or refused, never waited on", async () => {
  const dir = await visibleTempDir("penguin-fifo-policy-");
  try {
    const content = '{ "sandbox": "workspace-write" }\n';
    await Deno.writeTextFile(join(dir, "penguin.jsonc"), content);
    const fifo = new Deno.Command("mkfifo", { args: [join(dir, ".f")] });
    assert.equal((await fifo.output()).code, 0);
    const seen = new Set<string>();
    await whileSwapping(dir, "penguin.jsonc", ".f", async () => {
      let bytes: Uint8Array | undefined;
      try {
        bytes = await readWorkspacePolicyBytes(join(dir, "penguin.jsonc"));
      } catch (err) {
        assert.match((err as Error).message, /not a regular file/);
        seen.add("refused");
        return;
      }
      assert.equal(new TextDecoder().decode(bytes), content, "read from what was opened");
      seen.add("read");
    });
    assert.ok(seen.size > 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a .git directory swapped with a FIFO: opened for a lock or refused, never waited on", async () => {
  const dir = await visibleTempDir("penguin-fifo-lock-");
  try {
    await Deno.mkdir(join(dir, ".git"));
    const fifo = new Deno.Command("mkfifo", { args: [join(dir, ".f")] });
    assert.equal((await fifo.output()).code, 0);
    await whileSwapping(dir, ".git", ".f", async () => {
      try {
        const file = await openForLock(join(dir, ".git"));
        if (file) {
          assert.ok((await file.stat()).isDirectory);
          file.close();
        }
      } catch (err) {
        assert.ok(err instanceof LockBusyError, String(err));
      }
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
