/**
 * Running a script in a penguin process of its own, with a run directory of its own
 * (`PENGUIN_RUN_DIR`), so what it does to the run directory (the seccomp filter file, setup
 * logs, stand-ins) neither disturbs nor is disturbed by other tests' sandboxes.
 *
 * @module
 */
import assert from "node:assert/strict";
import { denoEval } from "../support/deno_eval.ts";

/** Import lines for `seccompFile` and `seccompProgram`, for a script run by `evalInRunDir`. */
export const SECCOMP_IMPORTS = `
  import { seccompFile } from ${
  JSON.stringify(new URL("../../lib/sandbox/_seccomp_file.ts", import.meta.url).href)
};
  import { seccompProgram } from ${
  JSON.stringify(new URL("../../lib/sandbox/seccomp.ts", import.meta.url).href)
};`;

/** `deno eval` `script` with `PENGUIN_RUN_DIR` set to `runDir`; asserts it exits 0, returns its stdout. */
export async function evalInRunDir(script: string, runDir: string): Promise<string> {
  return new TextDecoder().decode(await denoEval(script, { PENGUIN_RUN_DIR: runDir }));
}

/** `deno run -A <args>` with `PENGUIN_RUN_DIR` set to `runDir`; asserts it exits 0, returns its stdout. */
export async function runScriptInRunDir(runDir: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ...args],
    env: { PENGUIN_RUN_DIR: runDir },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}
