/**
 * A path git will use, resolved the way the kernel resolves it: component by
 * component, following symbolic links as they come, so that `..` after a
 * link leaves the link's target, not the directory holding the link
 * (`q/../cm` with `q -> ../deep/x` is `deep/cm`). Every git path penguin
 * guards or follows in lib/sandbox (a `.git` file's `gitdir:`, `commondir`,
 * `core.hooksPath` and the other configured paths, `include.path` and
 * `includeIf.*.path`) goes through {@linkcode physicalPath}: resolving such a
 * path as text (`path.resolve`) guards one file while git uses another.
 *
 * From the first missing component on, the rest is taken as text (the kernel
 * would fail there now; what matters is where the path leads once the model
 * creates it). The result also lists what the model could change after the
 * look-up to send the path elsewhere: the links it went through, and the
 * entries a `..` stepped out of (a later link there re-points the path).
 *
 * @module
 */
import { dirname, isAbsolute } from "node:path";
import { lstatOrNone, realPathOrNone } from "./_look.ts";

/** Where a path leads, and what it went through on the way. */
export interface PhysicalPath {
  /** The path the kernel would use (links resolved; text from the first missing component). */
  path: string;
  /** The symbolic links followed (the link entries, not their targets). */
  links: string[];
  /** The entries a `..` stepped out of, as found on the way (a link among them is in `links`). */
  via: string[];
}

/** The most links followed, as Linux's ELOOP limit. */
const MAX_LINKS = 40;

function child(dir: string, name: string): string {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

/**
 * Resolve `path` against `base` (an absolute directory) the way the kernel
 * does when git opens it. Never rejects: an unreadable or missing component
 * ends the look-ups, and too many links end them where they are.
 */
export function physicalPath(base: string, path: string): PhysicalPath {
  const parts = (isAbsolute(path) ? path : `${base}/${path}`).split("/");
  const links: string[] = [];
  const via: string[] = [];
  let cur = "/";
  // The entry `cur` was reached through (what a `..` steps out of).
  let entry = "/";
  let lexical = false;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (entry !== "/") via.push(entry);
      cur = dirname(cur);
      entry = cur;
      continue;
    }
    const next = child(cur, part);
    if (!lexical) {
      const info = lstatOrNone(next);
      if (info === undefined) lexical = true;
      else if (info.isSymlink) {
        links.push(next);
        const real = links.length > MAX_LINKS ? undefined : realPathOrNone(next);
        if (real === undefined) lexical = true; // a dangling link: what it will name is unknown
        else {
          cur = real;
          entry = next;
          continue;
        }
      }
    }
    cur = next;
    entry = next;
  }
  return { path: cur, links, via };
}
