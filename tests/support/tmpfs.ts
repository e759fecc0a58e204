/**
 * A real full disk for the tests that need one: whether this process may
 * mount a tmpfs (root on Linux), mounting and unmounting one, and filling a
 * file system until it refuses.
 *
 * @module
 */
import assert from "node:assert/strict";

/** Whether this process may mount a tmpfs (root on Linux). */
export async function canMount(): Promise<boolean> {
  if (Deno.build.os !== "linux" || Deno.uid() !== 0) return false;
  const dir = await Deno.makeTempDir({ prefix: "penguin-mount-probe-" });
  try {
    const m = await new Deno.Command("mount", {
      args: ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir],
      stdout: "null",
      stderr: "null",
    }).output();
    if (!m.success) return false;
    await new Deno.Command("umount", { args: [dir] }).output();
    return true;
  } catch {
    return false;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Mount a private tmpfs of `size` (`4m`, `64k`) on `dir`, made first when missing. */
export async function mountTmpfs(dir: string, size: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  const m = await new Deno.Command("mount", {
    args: ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir],
  }).output();
  assert.ok(m.success, new TextDecoder().decode(m.stderr));
}

/** Unmount what is mounted on `dir`. */
export async function umount(dir: string): Promise<void> {
  await new Deno.Command("umount", { args: [dir] }).output();
}

/** Write to `path` until the file system refuses (ENOSPC). */
export async function fillDisk(path: string): Promise<void> {
  using f = await Deno.open(path, { write: true, create: true });
  const block = new Uint8Array(64 * 1024);
  try {
    for (let i = 0; i < 100_000; i++) await f.write(block);
    throw new Error("the disk never filled");
  } catch (err) {
    if (!String(err).includes("os error 28")) throw err;
  }
}
