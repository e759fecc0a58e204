/**
 * Binds that would show a hidden path again. The sandbox mounts by depth
 * (`bwrap.ts`): a bind at or below a hidden directory goes on after the empty
 * tmpfs that hides it, and so shows what lies there on the host. The git
 * guard (`plan.ts`) is planned before the hide list is final, and what a
 * repository names (a hook's words, `core.hooksPath = ../.ssh`) may lie in a
 * hidden directory: {@linkcode dropHidden} removes those mounts (a hidden
 * path is out of every command's reach, so nothing there needs protecting),
 * and {@linkcode hiddenBindProblem} is the plan's last check that no bind is
 * left there.
 *
 * @module
 */
import { sep } from "node:path";

/** What a plan hides, and what it shows again inside that (roots, reveal targets). */
export interface HiddenView {
  /** Directories covered by an empty tmpfs (hidden and private ones). */
  dirs: readonly string[];
  /** Files covered by `/dev/null`. */
  files: readonly string[];
  /** Paths bound over a hidden directory on purpose: the roots and the reveals' targets. */
  shown: readonly string[];
}

function within(path: string, dir: string): boolean {
  if (dir === "/") return true;
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/** The length of the longest of `list` that `path` is or lies in; -1 when none. */
function deepest(path: string, list: readonly string[]): number {
  return Math.max(-1, ...list.filter((d) => within(path, d)).map((d) => d.length));
}

/**
 * Whether `path` is hidden by `view`: a hidden file itself, or at or below a
 * hidden directory that no root or reveal nearer to it shows again.
 */
export function isHidden(path: string, view: HiddenView): boolean {
  if (view.files.includes(path) && !view.shown.includes(path)) return true;
  return deepest(path, view.dirs) > deepest(path, view.shown);
}

/** `list` without the hidden paths of `view` for which `drop` holds (in place). */
export function dropHidden(
  list: string[],
  view: HiddenView,
  drop: (path: string) => boolean = () => true,
): void {
  const kept = list.filter((p) => !(drop(p) && isHidden(p, view)));
  list.splice(0, list.length, ...kept);
}

/**
 * The first of `binds` (paths a plan binds: protected, pinned) that would
 * show a hidden path of `view` again, or undefined.
 */
export function hiddenBindProblem(
  binds: readonly string[],
  view: HiddenView,
): string | undefined {
  return binds.find((p) => isHidden(p, view));
}
