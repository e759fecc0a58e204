/**
 * Small path facts the sandbox's planners share: whether a path lies in a
 * root, the real path of one that may be missing, and the HOME of this
 * process when penguin may read it.
 *
 * @module
 */
import { sep } from "node:path";

/** True when `path` is `root` or lies below it. */
export function inside(path: string, root: string): boolean {
  if (root === "/") return true;
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** The real path of `path`, or undefined when it does not exist. */
export async function realOf(path: string): Promise<string | undefined> {
  try {
    return await Deno.realPath(path);
  } catch {
    return undefined;
  }
}

/** This process's HOME, or undefined when it is unset, empty or not readable. */
export function ownHome(): string | undefined {
  try {
    return Deno.env.get("HOME") || undefined;
  } catch {
    return undefined;
  }
}
