// One penguin run directory (`PENGUIN_RUN_DIR`: the stand-in registry, the seccomp filter) for
// the tests that must not share the user's. `deno test --parallel` runs every test module in one
// process, so the environment is shared by all of them: a module that set its own directory and
// removed it when it unloaded pulled it from under penguin subprocesses that other modules were
// still starting. So there is one per test process, made by the first module that asks, and never
// removed while the process runs (a few bytes in the temp directory).
import { join } from "node:path";

const MARK = "penguin-test-run-";

/** Point `PENGUIN_RUN_DIR` at this test process's run directory (made on first use) and return it. */
export function useTestRunDir(): string {
  const set = Deno.env.get("PENGUIN_RUN_DIR");
  if (set !== undefined && set.includes(MARK)) return set;
  const dir = join(Deno.makeTempDirSync({ prefix: `${MARK}${Deno.pid}-` }));
  Deno.env.set("PENGUIN_RUN_DIR", dir);
  return dir;
}
