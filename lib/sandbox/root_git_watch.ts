/**
 * The `.git` stand-in of a root, watched over each command. Where a root has no `.git`, penguin
 * holds the name with a stand-in that its sandboxes mount read-only (`_placeholders.ts`), so no
 * command of the session can make a repository there. A command of an enclosing session whose
 * sandbox started before that stand-in existed sees it as a plain directory of its workspace: it
 * can fill it, or remove it (a mount point only in another mount namespace is removed, and the
 * mount there detached), and then this session's running command made a real `.git` with
 * `core.fsmonitor`; the walk after the command skips a root's own `.git`, and the user's next
 * `git status` ran the model's program (attack round 28 e23).
 *
 * So each command notes, as it starts, what lies at each root's `.git` that this process holds a
 * stand-in for (device, inode, change and modification times), and once it has ended, a `.git`
 * that changed meanwhile and would make git run something a command chose (`armedReason`) is
 * renamed aside, as a nested repository a command made is, and the session's end report says so.
 * One that changed between commands is the user's (`git init` on the host fills the stand-in) and
 * is left to the plan's guard.
 *
 * @module
 */
import { join } from "node:path";
import { livePlaceholders } from "./_placeholders.ts";
import { lstatOrNone } from "./_look.ts";
import { armedReason, renameAside } from "./git_nested.ts";
import { noteSessionEnd } from "./session_end_report.ts";

/** What lies at a path, as far as telling it changed goes ("-": nothing). */
function identity(path: string): string {
  const i = lstatOrNone(path);
  if (i === undefined) return "-";
  return [i.dev, i.ino, i.mtime?.getTime(), i.ctime?.getTime(), i.isDirectory].join(":");
}

/** The `.git` stand-ins of `roots` as one command found them when it started. */
export interface RootGitWatch {
  /** Check them once the command has ended (see the module doc). */
  check(): Promise<void>;
}

/** Note what lies at the `.git` of each of `roots` that this process holds a stand-in for. */
export function watchRootGits(roots: readonly string[]): RootGitWatch {
  const held = livePlaceholders();
  const seen = new Map<string, { root: string; id: string }>();
  for (const root of roots) {
    const entry = join(root, ".git");
    if (held.has(entry)) seen.set(entry, { root, id: identity(entry) });
  }
  return {
    async check() {
      for (const [entry, { root, id }] of seen) {
        if (identity(entry) === id) continue;
        const info = lstatOrNone(entry);
        if (info === undefined) continue;
        const repo = { workTree: root, entry, kind: "dotgit" as const, symlink: info.isSymlink };
        const why = await armedReason(repo, roots).catch((err) => `it cannot be checked (${err})`);
        if (why === undefined) continue;
        try {
          const to = await renameAside(entry);
          noteSessionEnd(
            `[penguin] renamed "${entry}" to "${to}": ${why}, and it replaced penguin's ` +
              `stand-in while a command ran, so the host's git would run something a command ` +
              `chose. Look at it before you rename it back`,
            false,
          );
        } catch (err) {
          // Gone meanwhile: another walk (of this penguin or another) renamed it aside first.
          if (lstatOrNone(entry) === undefined) continue;
          noteSessionEnd(
            `[penguin] "${entry}" would make git run something a command chose (${why}), and ` +
              `penguin could not rename it aside (${err}): remove or rename it before you run ` +
              "git there",
            true,
          );
        }
      }
    },
  };
}
