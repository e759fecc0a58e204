/**
 * Running a script in a penguin process of its own, with a run directory of its own
 * (`PENGUIN_RUN_DIR`), so what it does to the run directory (the seccomp filter file, setup
 * logs, stand-ins) neither disturbs nor is disturbed by other tests' sandboxes; and with a key
 * directory of its own inside it (`PENGUIN_KEY_DIR`), which keeps a list of data roots and trust
 * records too (`lib/sandbox/_data_roots.ts`, `_repo_trust.ts`).
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { denoEval } from "../support/deno_eval.ts";

/** The environment of a script run in `runDir`: that run directory, and a key directory in it. */
function runDirEnv(runDir: string): Record<string, string> {
  return { PENGUIN_RUN_DIR: runDir, PENGUIN_KEY_DIR: join(runDir, "keys") };
}

/** Import lines for `seccompFile` and `seccompProgram`, for a script run by `evalInRunDir`. */
export const SECCOMP_IMPORTS = `
  import { seccompFile } from ${
  JSON.stringify(new URL("../../lib/sandbox/_seccomp_file.ts", import.meta.url).href)
};
  import { seccompProgram } from ${
  JSON.stringify(new URL("../../lib/sandbox/seccomp.ts", import.meta.url).href)
};`;

/** `deno eval` `script` with `PENGUIN_RUN_DIR` set to `runDir` ({@linkcode runDirEnv}); asserts it exits 0, returns its stdout. */
export async function evalInRunDir(script: string, runDir: string): Promise<string> {
  return new TextDecoder().decode(await denoEval(script, runDirEnv(runDir)));
}

/** `deno run -A <args>` with `PENGUIN_RUN_DIR` set to `runDir`; asserts it exits 0, returns its stdout. */
export async function runScriptInRunDir(runDir: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ...args],
    env: runDirEnv(runDir),
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}
