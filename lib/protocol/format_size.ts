/**
 * A byte count for people: `812 B`, `12.3 KiB`, `16 MiB`, `12.0 GiB`; and
 * the mebibyte the size limits are written in.
 *
 * @module
 */

/** One mebibyte (1024 × 1024 bytes, or characters where a limit counts those). */
export const MiB = 1024 * 1024;

/** `812 B`, `12.3 KiB`, `16 MiB`, `12.0 GiB`: a whole number when exact, else one decimal. */
export function formatSize(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  const text = u === 0 || Number.isInteger(v) ? String(v) : v.toFixed(1);
  return `${text} ${units[u]}`;
}
