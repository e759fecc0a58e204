/**
 * Where penguin keeps its data: `--root` > `PENGUIN_HOME` > `~/.penguin/data`.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { PenguinError } from "../protocol/errors.ts";

/** Options for {@linkcode resolveDataRoot}. */
export interface DataRootOptions {
  /** The `--root` flag, if given. Relative paths resolve against the cwd. */
  root?: string | undefined;
  /** Environment lookup; defaults to `Deno.env.get`. */
  env?: ((name: string) => string | undefined) | undefined;
}

/**
 * The absolute data root: the `--root` flag, else `PENGUIN_HOME`, else
 * `$HOME/.penguin/data`. Empty values count as unset. Throws a config error
 * when none of them is available.
 */
export function resolveDataRoot(opts: DataRootOptions = {}): string {
  const env = opts.env ?? ((name: string) => Deno.env.get(name));
  if (opts.root !== undefined && opts.root !== "") return resolve(opts.root);
  const fromEnv = env("PENGUIN_HOME");
  if (fromEnv !== undefined && fromEnv !== "") return resolve(fromEnv);
  const home = env("HOME") || env("USERPROFILE");
  if (home === undefined || home === "") {
    throw new PenguinError(
      "config",
      "Cannot locate the data root: neither --root nor PENGUIN_HOME is set, and HOME is not set either",
    );
  }
  return resolve(join(home, ".penguin", "data"));
}
