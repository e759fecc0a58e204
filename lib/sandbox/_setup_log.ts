/**
 * Setup failures of a sandbox that shares penguin's stdio, and the handle
 * that starts such a sandbox again after one.
 *
 * A command sharing penguin's terminal has no control channel (its stderr is
 * penguin's own), so bwrap's setup messages go to a log in penguin's private
 * run directory until the wrapper writes its ready line there (see
 * `SUPERVISOR` in `_supervisor.ts`). A log that ends without that line when
 * the job has ended means the sandbox never started: the command did not
 * run, and starting it again (with a fresh plan, when a path the plan mounts
 * went away meanwhile) cannot run it twice.
 *
 * @module
 */
import { join } from "node:path";
import type { ExitStatus, SandboxedProcess } from "./_process.ts";
import { READY } from "./_supervisor.ts";
import { privateRunDir } from "./_standin_registry.ts";

/** At most this much of a log is read: bwrap says one line before it gives up. */
const MAX_LOG_BYTES = 64 * 1024;

/** A log this old is one a killed penguin left: removed by the next penguin's first command. */
const STALE_MS = 24 * 60 * 60 * 1000;
let swept = false;

async function sweep(dir: string): Promise<void> {
  swept = true;
  try {
    for await (const e of Deno.readDir(dir)) {
      if (!e.isFile || !/^setup-.*\.log$/.test(e.name)) continue;
      const path = join(dir, e.name);
      const info = await Deno.lstat(path).catch(() => undefined);
      if (info?.mtime && Date.now() - info.mtime.getTime() > STALE_MS) {
        await Deno.remove(path).catch(() => {});
      }
    }
  } catch {
    // Best effort.
  }
}

/** A fresh setup log path in penguin's private run directory, or undefined without one. */
export async function newSetupLog(): Promise<string | undefined> {
  const dir = await privateRunDir().catch(() => undefined);
  if (dir === undefined) return undefined;
  if (!swept) await sweep(dir);
  return join(dir, `setup-${crypto.randomUUID()}.log`);
}

/**
 * Read and remove the setup log `path` of an ended job: what the sandbox said
 * when it never started, or undefined when it started (the ready line is
 * there) or no log was written (the job ended before bwrap ran).
 */
export async function takeSetupLog(path: string): Promise<string | undefined> {
  let text: string | undefined;
  try {
    using file = await Deno.open(path, { read: true });
    const buf = new Uint8Array(MAX_LOG_BYTES);
    let n = 0;
    while (n < buf.length) {
      const got = await file.read(buf.subarray(n));
      if (got === null) break;
      n += got;
    }
    text = new TextDecoder().decode(buf.subarray(0, n));
  } catch {
    text = undefined;
  }
  await Deno.remove(path).catch(() => {});
  if (text === undefined || text.split("\n").includes(READY)) return undefined;
  return text.trim().split("\n").slice(-5).join("; ") || "bwrap exited before the command started";
}

/**
 * One handle over successive attempts: when an attempt ends, `next` gets its
 * status and whether the caller has signalled or killed it (then it must not
 * start another), and returns the attempt to follow, or undefined to end
 * with that status.
 */
export function chainAttempts(
  first: SandboxedProcess,
  next: (status: ExitStatus, stopped: boolean) => Promise<SandboxedProcess | undefined>,
): SandboxedProcess {
  let current = first;
  let stopped = false;
  const status = (async () => {
    for (;;) {
      const st = await current.status;
      const following = await next(st, stopped);
      if (following === undefined) return st;
      current = following;
      if (stopped) void following.kill();
    }
  })();
  return {
    pid: first.pid,
    sandbox: first.sandbox,
    output: first.output,
    outputClosed: first.outputClosed,
    status,
    write: (chars) => current.write(chars),
    closeStdin: () => current.closeStdin(),
    signal: (sig) => {
      stopped = true;
      current.signal(sig);
    },
    kill: async (graceMs) => {
      stopped = true;
      await current.kill(graceMs);
      return await status;
    },
    [Symbol.asyncDispose]: async () => {
      stopped = true;
      await current.kill();
      await status.catch(() => {});
    },
  };
}
