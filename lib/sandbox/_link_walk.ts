/**
 * A path walked component by component as the kernel resolves it: each
 * component looked up with `lstat`, a symbolic link replaced by what it
 * holds (relative to the directory it lies in), and `..` taken from the
 * directory reached so far, after the links before it were followed (so
 * `a/../b`, `a` a link, is not `b` beside `a`). What the walk meets is what
 * a later change by a command could re-point: the links on the way, and
 * the directories each `..` leaves.
 *
 * The walk never hands a path holding `..` to a file-system call: Deno
 * takes such a path apart as text when permissions are granted by scope
 * (penguin's), so `realPath("~/a/..")` is `~` there, not where `a` leads.
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
  /**
   * Where the kernel leads the path: every link followed, each `..` taken
   * from the directory reached; from the first missing component on, the
   * rest kept as written (its `..` taken as text, as it would be once the
   * missing directories were made). Undefined after too many links, or when
   * a link cannot be read.
   */
  target: string | undefined;
  /** The first missing component met, at its real place (`<ws>/sub` of a link to it), if any. */
  missingAt: string | undefined;
}

/** At most this many links followed in one walk (the kernel's `ELOOP` limit). */
const MAX_LINKS = 40;

/** The components of `p` to walk, in walking order, without empty and `.` ones. */
function partsOf(p: string): string[] {
  return p.split("/").filter((c) => c !== "" && c !== ".");
}

/**
 * Walk the absolute `path` as the kernel does. Nothing is looked up after
 * the first missing component (the rest is taken as text), and the walk
 * gives up at a link that cannot be read and after {@linkcode MAX_LINKS}
 * links.
 */
export function walkAsKernel(path: string): PathWalk {
  const links: string[] = [];
  const upFrom: string[] = [];
  // A stack: the next component on top.
  const pending = partsOf(path).reverse();
  let cur = "/";
  let followed = 0;
  let missingAt: string | undefined;
  while (pending.length > 0) {
    const part = pending.pop()!;
    if (part === "..") {
      if (missingAt === undefined && !upFrom.includes(cur)) upFrom.push(cur);
      cur = dirname(cur);
      continue;
    }
    const next = join(cur, part);
    const info = missingAt === undefined ? lstatOrNone(next) : undefined;
    if (info === undefined || !info.isSymlink) {
      if (info === undefined) missingAt ??= next;
      cur = next;
      continue;
    }
    if (!links.includes(next)) links.push(next);
    let target: string;
    try {
      if (++followed > MAX_LINKS) throw new Error("too many links");
      target = Deno.readLinkSync(next);
    } catch {
      return { links, upFrom, target: undefined, missingAt };
    }
    if (target.startsWith("/")) cur = "/";
    pending.push(...partsOf(target).reverse());
  }
  return { links, upFrom, target: cur, missingAt };
}
