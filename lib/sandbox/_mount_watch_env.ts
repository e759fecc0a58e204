/**
 * The environment that names a sandbox's mount points inside its roots to its init, which
 * watches them (`_mount_watch.ts`).
 *
 * @module
 */
import { mountPointsInRoots } from "./bwrap.ts";
import { mountinfoPath } from "./_mount_watch.ts";
import type { SandboxPlan } from "./plan.ts";
import { lstatOrNone } from "./_look.ts";

/** The mount points `path` has once symbolic links are followed (bwrap mounts on their target). */
function resolved(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

/** The init's environment naming the mount points to watch (`__PSW_<n>`, see `_mount_watch.ts`). */
export function mountWatchEnv(plan: SandboxPlan): Record<string, string> {
  const out: Record<string, string> = {};
  // A `-try` mount whose source is gone now is one bwrap will rightly skip (a repository a
  // command removed); one that is there must be mounted.
  const watched = mountPointsInRoots(plan).filter((m) => !m.optional || lstatOrNone(m.path));
  watched.forEach((m, i) => {
    out[`__PSW_${i}`] = mountinfoPath(resolved(m.path));
  });
  return out;
}
