/**
 * The swap tests' shared setup: the swapper (`_swap_helper.ts`), a process exchanging two names
 * in a loop the way a session whose workspace encloses another's could.
 *
 * @module
 */
import { type SandboxPolicy, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { collect } from "./_helpers.ts";
import { readUntil } from "../support/child_lines.ts";

/** What a command refused for a swapped workspace or root says. */
export const SWAP_REFUSED = /session started (with|in)/;

/** A running swapper. */
export interface Swapper {
  /** Its stdout: a `swapping` line once it swaps, the number of exchanges when it ends. */
  lines: ReadableStreamDefaultReader<string>;
  /** Returns once it swaps (its `swapping` line read): a test then runs against a moving tree. */
  swapping(): Promise<void>;
  /** Ask it to stop and read the rest of its output: the number of exchanges it made. */
  stop(): Promise<number>;
  /** Stop it (whatever happened before) and reap it. */
  close(): Promise<void>;
}

/**
 * Start exchanging the names `a` and `b` in `dir` until the file `stopFile` exists or `rounds`
 * exchanges are done.
 */
export function startSwapper(
  dir: string,
  a: string,
  b: string,
  stopFile: string,
  rounds: number,
): Swapper {
  const helper = new URL("./_swap_helper.ts", import.meta.url).pathname;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-ffi", "--allow-read", "--allow-write", helper, dir, a, b, stopFile]
      .concat(String(rounds)),
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  return {
    lines,
    swapping: async () => {
      const head = await readUntil(lines, "swapping");
      if (!head.includes("swapping")) throw new Error(`the swapper did not start: ${head}`);
    },
    stop: async () => {
      await Deno.writeTextFile(stopFile, "");
      let tail = "";
      for (;;) {
        const { value, done } = await lines.read();
        if (done) break;
        tail += value;
      }
      return Number(tail.trim().split("\n").at(-1));
    },
    close: async () => {
      await Deno.writeTextFile(stopFile, "").catch(() => {});
      await lines.cancel().catch(() => {});
      await child.status;
    },
  };
}

/** Run `shell` under `policy`: its output and status, or the refusal's message. */
export async function runOrRefusal(
  policy: SandboxPolicy,
  shell: string,
): Promise<{ out: string; code?: number }> {
  try {
    const r = await collect(await spawnSandboxed({ shell, policy }));
    return { out: r.out, code: r.code };
  } catch (err) {
    return { out: (err as Error).message };
  }
}
