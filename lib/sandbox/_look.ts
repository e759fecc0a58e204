/**
 * Looks at the file system for a plan: `lstat`, `stat` and `realpath` of
 * local paths, answered at once (synchronously), undefined where the path
 * cannot be looked at. A plan makes hundreds of these per command; each of
 * Deno's asynchronous calls is a round trip through a thread pool, which on
 * a loaded machine costs far more than the call itself (issue 32).
 *
 * @module
 */

/** `lstat` of `path`; undefined when it fails. */
export function lstatOrNone(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.lstatSync(path);
  } catch {
    return undefined;
  }
}

/** `stat` of `path` (links followed); undefined when it fails. */
export function statOrNone(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.statSync(path);
  } catch {
    return undefined;
  }
}

/** The real path of `path`; undefined when it cannot be resolved. */
export function realPathOrNone(path: string): string | undefined {
  try {
    return Deno.realPathSync(path);
  } catch {
    return undefined;
  }
}

/** Whether `path` names anything (a dangling link included). */
export function existsNow(path: string): boolean {
  return lstatOrNone(path) !== undefined;
}

/** `lstat` of `path`; throws as `Deno.lstatSync` does. */
export function lstatNow(path: string): Deno.FileInfo {
  return Deno.lstatSync(path);
}

/** The entries of the directory `path`; throws as `Deno.readDirSync` does. */
export function listDirNow(path: string): Deno.DirEntry[] {
  return [...Deno.readDirSync(path)];
}

/** The text of the (small) file `path`; throws as `Deno.readTextFileSync` does. */
export function readTextNow(path: string): string {
  return Deno.readTextFileSync(path);
}
