/**
 * Stamps of files and directories for the plan's per-process caches: what
 * tells a later plan that a file it read (a shell startup file, a list of
 * data roots) is the very file it was, unchanged, so that its parse can be
 * taken again without reading it.
 *
 * A stamp is the device, inode, size, modification time (milliseconds) and
 * change time of one `stat`. Writing a file sets both times; renaming another
 * file over it gives another inode; only the owner can set the modification
 * time back, and doing so sets the change time to now, which no program can
 * set back. Deno reports the change time in whole seconds, and the kernel
 * takes both times from a clock that moves in ticks: a change made in the
 * same tick (or second) as the one a stamp saw could leave the stamp as it
 * was. So a stamp is kept only for a file last changed more than
 * {@linkcode SETTLE_MS} before the look ({@linkcode settledStamp}): any later
 * change gets a later second. A file changed more recently is read again at
 * every plan until it has been left alone that long.
 *
 * @module
 */

/** A file whose times are this close to the look (ms), or later, is not stamped. */
export const SETTLE_MS = 2000;

let clock: () => number = () => Date.now();

/**
 * Tests only: the clock of {@linkcode lookTime} (`undefined`: the real
 * one), to stamp a file just written without waiting.
 */
export function stampClockForTests(now?: () => number): void {
  clock = now ?? (() => Date.now());
}

/** The stamp of `info` as it is (see the module doc), for comparing with a settled one. */
export function stampNow(info: Deno.FileInfo): string {
  const kind = info.isFile ? "f" : info.isDirectory ? "d" : info.isSymlink ? "l" : "o";
  return `${kind}:${info.dev}:${info.ino}:${info.size}:${info.mtime?.getTime()}:` +
    `${info.ctime?.getTime()}`;
}

/** The time to pass to {@linkcode settledStamp}: taken before the `stat` it judges. */
export function lookTime(): number {
  return clock();
}

/**
 * The stamp of `info` (a `stat` taken after `lookedAt`, from
 * {@linkcode lookTime}) when its file was last changed long enough before
 * that look that any later change will show in it; undefined otherwise (or
 * where the system reports no times or inode): nothing may be cached on it.
 */
export function settledStamp(info: Deno.FileInfo, lookedAt: number): string | undefined {
  const m = info.mtime?.getTime();
  const c = info.ctime?.getTime();
  if (m === undefined || c === undefined || info.ino === null) return undefined;
  const before = lookedAt - SETTLE_MS;
  // The change time is floored to the second: the change itself may lie up to a second later.
  if (m > before || c + 1000 > before) return undefined;
  return stampNow(info);
}
