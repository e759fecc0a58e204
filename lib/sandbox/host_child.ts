/**
 * A host process that is penguin's own work, not the model's: another copy
 * of penguin (`penguin batch run` runs each task as a `penguin run` child).
 * It runs outside the sandbox, with penguin's environment, and dies with
 * penguin: it is started under `setpriv --pdeathsig KILL` when setpriv
 * supports it (through bash, which penguin may run), so a killed parent
 * leaves no task running, as with a killed pod.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";
import { findBash } from "./_probe.ts";

const LAUNCH = 'sp=$(command -v setpriv) && "$sp" --help 2>&1 | grep -q -- --pdeathsig && ' +
  'exec "$sp" --pdeathsig KILL -- "$@"; exec "$@"';

/** Start `argv` as a host child: no stdin, stdout and stderr piped. */
export async function spawnHostChild(argv: string[]): Promise<Deno.ChildProcess> {
  const bash = await findBash();
  if (!bash) {
    throw new PenguinError("runtime", `Cannot start ${argv[0]}: no bash found to start it with`);
  }
  return new Deno.Command(bash, {
    args: ["-c", LAUNCH, "penguin-child", ...argv],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}
