// One penguin run directory (`PENGUIN_RUN_DIR`: the stand-in registry, the seccomp filter) for
// the tests that must not share the user's. `deno test --parallel` runs every test module in one
// process, so the environment is shared by all of them: a module that set its own directory and
// removed it when it unloaded pulled it from under penguin subprocesses that other modules were
// still starting (an `unload` listener runs when its module's worker ends, not the process). So
// there is one per test process, made by the first module that asks, and never removed while the
// process runs; the next test process removes those of processes that are gone: one left behind
// stays noted in the user's run-directory list, which every plan of every later penguin reads.
import { dirname, join } from "node:path";

const MARK = "penguin-test-run-";

/** Point `PENGUIN_RUN_DIR` at this test process's run directory (made on first use) and return it. */
export function useTestRunDir(): string {
  return processDir("PENGUIN_RUN_DIR", MARK);
}

/**
 * The directory of this test process that the environment variable `name` names (made in the
 * temp directory with the prefix `mark` and the process id on first use, the variable set), as
 * {@linkcode useTestRunDir} makes the run directory; those of gone test processes are removed.
 */
export function processDir(name: string, mark: string): string {
  const set = Deno.env.get(name);
  if (set !== undefined && set.includes(mark)) return set;
  const dir = join(Deno.makeTempDirSync({ prefix: `${mark}${Deno.pid}-` }));
  Deno.env.set(name, dir);
  sweepDeadDirs(dirname(dir), mark);
  return dir;
}

/** Remove the directories named `mark<pid>-…` in `tmp` of test processes that no longer run. */
function sweepDeadDirs(tmp: string, mark: string): void {
  for (const e of Deno.readDirSync(tmp)) {
    const pid = e.name.startsWith(mark) ? e.name.slice(mark.length).split("-")[0] : undefined;
    if (!e.isDirectory || pid === undefined || !/^\d+$/.test(pid) || alive(Number(pid))) continue;
    try {
      Deno.removeSync(join(tmp, e.name), { recursive: true });
    } catch {
      // Removed by another test process meanwhile, or not ours to remove.
    }
  }
}

function alive(pid: number): boolean {
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return Deno.build.os !== "linux"; // without /proc, nothing is known to be gone
  }
}
