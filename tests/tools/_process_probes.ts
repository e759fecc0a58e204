/**
 * Watching host processes from the command tool tests: PIDs by argv
 * (/proc), a unique sleep to find, bounded polling and bounded waits.
 *
 * @module
 */
import { join } from "node:path";

/** Host PIDs whose argv has an element equal to `arg` (reads /proc). */
export function pidsWithArg(arg: string): number[] {
  const pids: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const argv = Deno.readTextFileSync(join("/proc", e.name, "cmdline")).split("\0");
      const stat = Deno.readTextFileSync(join("/proc", e.name, "stat"));
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (argv.includes(arg) && state !== "Z") pids.push(Number(e.name));
    } catch {
      // The process exited while we looked.
    }
  }
  return pids;
}

/** Poll (at most `tries` × 50 ms) until `pred` holds; returns whether it did. */
export async function eventually(
  pred: () => boolean | Promise<boolean>,
  tries = 400,
): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (await pred()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return await pred();
}

/** A unique sleep duration (as text) so /proc probes find exactly this test's process. */
export function uniqueSleep(): string {
  return `${300 + Math.floor(Math.random() * 600)}.${
    String(Math.floor(Math.random() * 1e6)).padStart(6, "0")
  }`;
}

/** Resolve with `p`, or reject after `ms` (a safety bound for waits that should end). */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`gave up waiting for ${what}`)), ms);
  });
  return Promise.race([p, bound]).finally(() => clearTimeout(timer));
}
