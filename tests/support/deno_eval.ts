/**
 * Running a script in a Deno process of its own (`deno eval`): for what must start from a fresh
 * process (a module's state, the garbage collector's first use, stdout as a pipe).
 *
 * @module
 */
import assert from "node:assert/strict";

/** `deno eval` `script` (with `env` added); asserts it exits 0, returns its stdout's bytes. */
export async function denoEval(
  script: string,
  env: Record<string, string> = {},
): Promise<Uint8Array> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", script],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return out.stdout;
}
