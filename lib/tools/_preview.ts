/**
 * Pieces of tool previews (the one-line summaries renderers show): reading
 * a string argument from raw, possibly partial arguments, and shortening a
 * path to its last two segments.
 *
 * @module
 */

/** The string argument `name`, or undefined when absent or not a string. */
export function stringArg(args: Record<string, unknown>, name: string): string | undefined {
  const v = args[name];
  return typeof v === "string" ? v : undefined;
}

/** Shorten a path to at most its parent and file name: `…/parent/file.ts`. */
export function shortPath(path: string): string {
  const parts = path.split("/").filter((s) => s.length > 0);
  return parts.length <= 2 ? path : `…/${parts.slice(-2).join("/")}`;
}

/** The preview of a tool whose subject is one path argument. */
export function pathPreview(args: Record<string, unknown>, name: string): string | undefined {
  const p = stringArg(args, name);
  return p === undefined || p.trim() === "" ? undefined : shortPath(p.trim());
}
