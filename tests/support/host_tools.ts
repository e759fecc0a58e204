/**
 * Whether a program a test needs is installed on the host: tests that drive
 * a real terminal, browser or interpreter are skipped where it is missing.
 *
 * @module
 */

/** True when `path` is a regular file (following links); false when it is missing. */
export function hostHas(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}
