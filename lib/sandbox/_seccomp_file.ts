/**
 * The seccomp filter as a file the supervisor opens for bwrap's
 * `--seccomp 4` without forking: written once per process, read-only, in
 * penguin's private run directory (`/tmp/penguin-<uid>`, 0700; see
 * `_standin_registry.ts`), and removed when the process exits.
 *
 * Every penguin sandbox hides that directory (and pins the way to it), so no
 * command — of this penguin or another one, whatever its workspace — can
 * replace the filter for the next one. Should a sandbox root of this process
 * contain the file all the same: from
 * the first such plan on, {@linkcode seccompFile} answers undefined for the
 * rest of the process (the supervisor then pipes the filter from memory,
 * one fork more) and the file is removed. A file removed by someone else
 * (a `/tmp` cleaner during a long session) is written again.
 *
 * @module
 */
import { join } from "node:path";
import { seccompProgram } from "./seccomp.ts";
import { isInside } from "./plan.ts";
import { privateRunDir } from "./_standin_registry.ts";

let file: Promise<string | undefined> | undefined;
let exposed = false;

async function write(): Promise<string | undefined> {
  try {
    // In penguin's run directory, which every penguin's sandboxes hide (and pin the way to):
    // another penguin's command with a workspace of /tmp cannot replace the filter there.
    const dir = await Deno.makeTempDir({ dir: await privateRunDir(), prefix: "seccomp-" });
    const path = join(dir, "filter");
    await Deno.writeFile(path, seccompProgram(), { mode: 0o400, createNew: true });
    globalThis.addEventListener("unload", () => {
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch {
        // Already gone.
      }
    });
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
  file ??= write();
  let path = await file;
  if (path !== undefined && !await Deno.lstat(path).then((i) => i.isFile, () => false)) {
    // Removed meanwhile (a /tmp cleaner in a long session): write it again.
    file = write();
    path = await file;
  }
  if (path === undefined) return undefined;
  if (roots.some((r) => isInside(path, r))) {
    exposed = true;
    await Deno.remove(join(path, ".."), { recursive: true }).catch(() => {});
    return undefined;
  }
  return path;
}
