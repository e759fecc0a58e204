/**
 * The seccomp filter as a file the supervisor opens for bwrap's
 * `--seccomp 4` without forking: one read-only file per filter content,
 * shared by every penguin process of the user, in penguin's private run
 * directory (`/tmp/penguin-<uid>`, 0700; see `_standin_registry.ts`), at
 * `seccomp-<hash of the filter>/filter`. It is made once (a temporary
 * directory renamed into place, so no process ever sees half a file) and its
 * content is compared with the filter before every use; a missing or
 * different one is made again. Directories of other filters (older
 * versions, or the per-process files earlier versions left when killed) are
 * removed when a process first makes or finds its own, once a day old
 * ({@linkcode OTHER_FILTER_AGE_MS}).
 *
 * Every penguin sandbox hides that directory (and pins the way to it), so no
 * command — of this penguin or another one, whatever its workspace — can
 * replace the filter for the next one. Should a sandbox root of this process
 * contain the file all the same: from the first such plan on,
 * {@linkcode seccompFile} answers undefined for the rest of the process (the
 * supervisor then pipes the filter from memory, one fork more). The file is
 * left for the other processes, which check its content before each use.
 *
 * @module
 */
import { join } from "node:path";
import { seccompProgram } from "./seccomp.ts";
import { isInside } from "./plan.ts";
import { privateRunDir } from "./_standin_registry.ts";
import { hexOf } from "../protocol/hex.ts";

let exposed = false;
let swept = false;

let shared: Promise<{ dir: string; program: Uint8Array }> | undefined;

function sharedDir(): Promise<{ dir: string; program: Uint8Array }> {
  shared ??= locate();
  shared.catch(() => shared = undefined);
  return shared;
}

async function locate(): Promise<{ dir: string; program: Uint8Array }> {
  const program = seccompProgram();
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", program as BufferSource));
  const hash = hexOf(digest.subarray(0, 8));
  return { dir: join(await privateRunDir(), `seccomp-${hash}`), program };
}

async function holds(path: string, program: Uint8Array): Promise<boolean> {
  try {
    const info = await Deno.lstat(path);
    if (!info.isFile || info.size !== program.length) return false;
    const bytes = await Deno.readFile(path);
    return bytes.length === program.length && bytes.every((b, i) => b === program[i]);
  } catch {
    return false;
  }
}

/**
 * Another filter's directory is removed only once it is this old (ms): a penguin of another
 * version running meanwhile uses its own, and one removed between its check and bwrap's open
 * failed that command's start (attack round 29 i19). An older one's user makes it again.
 */
export const OTHER_FILTER_AGE_MS = 24 * 60 * 60 * 1000;

/** Remove the old directories of other filters (see the module doc); never fails. */
async function sweep(keep: string): Promise<void> {
  swept = true;
  try {
    const run = join(keep, "..");
    for await (const e of Deno.readDir(run)) {
      const path = join(run, e.name);
      if (!e.isDirectory || !e.name.startsWith("seccomp-") || path === keep) continue;
      const made = (await Deno.lstat(path).catch(() => undefined))?.mtime?.getTime();
      if (made !== undefined && Date.now() - made < OTHER_FILTER_AGE_MS) continue;
      await Deno.remove(path, { recursive: true }).catch(() => {});
    }
  } catch {
    // Best effort.
  }
}

async function ensure(): Promise<string | undefined> {
  try {
    const { dir, program } = await sharedDir();
    const path = join(dir, "filter");
    if (!await holds(path, program)) {
      // Made in a temporary directory and renamed into place: no reader sees a partial file.
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      const tmp = await Deno.makeTempDir({ dir: join(dir, ".."), prefix: ".seccomp-tmp-" });
      await Deno.writeFile(join(tmp, "filter"), program, { mode: 0o400, createNew: true });
      await Deno.rename(tmp, dir).catch(async () => {
        // Another process put its (identical) one in place first.
        await Deno.remove(tmp, { recursive: true }).catch(() => {});
      });
      if (!await holds(path, program)) return undefined;
    }
    if (!swept) await sweep(dir);
    return path;
  } catch {
    return undefined;
  }
}

/**
 * The filter file for a sandbox with `roots`, or undefined when the caller
 * must pipe the filter itself (no file could be written, or some sandbox
 * of this process could reach it).
 */
export async function seccompFile(roots: readonly string[]): Promise<string | undefined> {
  if (exposed) return undefined;
  const path = await ensure();
  if (path === undefined) return undefined;
  if (roots.some((r) => isInside(path, r))) {
    // Left in place: other penguins use it, and each checks its content before every use.
    exposed = true;
    return undefined;
  }
  return path;
}
