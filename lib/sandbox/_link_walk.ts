/**
 * A path walked component by component as the kernel resolves it: each
 * component looked up with `lstat`, a symbolic link replaced by what it
 * holds (relative to the directory it lies in), and `..` taken from the
 * directory reached so far, after the links before it were followed (so
 * `a/../b`, `a` a link, is not `b` beside `a`). What the walk meets is what
 * a later change by a command could re-point: the links on the way, and
 * the directories each `..` leaves.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { lstatOrNone } from "./_look.ts";

/** What {@linkcode walkAsKernel} meets on its way. */
export interface PathWalk {
  /** The symbolic links met, each at its real place (its directory's real path and its name). */
  links: string[];
  /** The real directories a `..` step leaves (the one reached before the `..`). */
  upFrom: string[];
}

/** At most this many links followed in one walk (the kernel's `ELOOP` limit). */
const MAX_LINKS = 40;

/** The components of `p` to walk, in walking order, without empty and `.` ones. */
function partsOf(p: string): string[] {
  return p.split("/").filter((c) => c !== "" && c !== ".");
}

/**
 * Walk the absolute `path` as the kernel does. The walk stops at the first
 * missing component (nothing after it can be looked up), at a link that
 * cannot be read, and after {@linkcode MAX_LINKS} links.
 */
export function walkAsKernel(path: string): PathWalk {
  const links: string[] = [];
  const upFrom: string[] = [];
  // A stack: the next component on top.
  const pending = partsOf(path).reverse();
  let cur = "/";
  let followed = 0;
  while (pending.length > 0) {
    const part = pending.pop()!;
    if (part === "..") {
      if (!upFrom.includes(cur)) upFrom.push(cur);
      cur = dirname(cur);
      continue;
    }
    const next = join(cur, part);
    const info = lstatOrNone(next);
    if (info === undefined) break;
    if (!info.isSymlink) {
      cur = next;
      continue;
    }
    if (!links.includes(next)) links.push(next);
    if (++followed > MAX_LINKS) break;
    let target: string;
    try {
      target = Deno.readLinkSync(next);
    } catch {
      break;
    }
    if (target.startsWith("/")) cur = "/";
    pending.push(...partsOf(target).reverse());
  }
  return { links, upFrom };
}
