/**
 * Small path facts the sandbox's planners share: whether a path lies in a
 * root, the real path of one that may be missing (or of a directory),
 * whether a directory is empty, and the HOME of this process when penguin
 * may read it.
 *
 * @module
 */
import { sep } from "node:path";
import { realPathOrNone, statOrNone } from "./_look.ts";

/** True when `path` is `root` or lies below it. */
export function inside(path: string, root: string): boolean {
  if (root === "/") return true;
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** The real path of `path`, or undefined when it does not exist. */
export function realOf(path: string): Promise<string | undefined> {
  return Promise.resolve(realPathOrNone(path));
}

/** The real path of `path` when it is (or leads to) a directory, else undefined. */
export function realDir(path: string): Promise<string | undefined> {
  const real = realPathOrNone(path);
  return Promise.resolve(
    real !== undefined && statOrNone(real)?.isDirectory === true ? real : undefined,
  );
}

/** True when `path` is a directory with no entries; false when it has some or cannot be read. */
export function isEmptyDir(path: string): Promise<boolean> {
  try {
    // The first entry decides: a directory of a million entries is not listed.
    for (const _ of Deno.readDirSync(path)) return Promise.resolve(false);
    return Promise.resolve(true);
  } catch {
    return Promise.resolve(false);
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
