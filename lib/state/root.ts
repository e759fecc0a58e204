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
  /**
   * Return the path even when something other than a directory is there
   * (for hiding the data root from a sandbox, not for using it).
   */
  anyKind?: boolean | undefined;
}

/**
 * The absolute data root: the `--root` flag, else `PENGUIN_HOME`, else
 * `$HOME/.penguin/data`. Empty values count as unset. Throws a config error
 * when none of them is available, and (unless `anyKind`) when the path names
 * something that is not a directory or lies under a file.
 */
export function resolveDataRoot(opts: DataRootOptions = {}): string {
  const env = opts.env ?? ((name: string) => Deno.env.get(name));
  const fromEnv = env("PENGUIN_HOME");
  let root: string;
  let source: string;
  if (opts.root !== undefined && opts.root !== "") {
    [root, source] = [resolve(opts.root), "--root"];
  } else if (fromEnv !== undefined && fromEnv !== "") {
    [root, source] = [resolve(fromEnv), "PENGUIN_HOME"];
  } else {
    const home = env("HOME") || env("USERPROFILE");
    if (home === undefined || home === "") {
      throw new PenguinError(
        "config",
        "Cannot locate the data root: neither --root nor PENGUIN_HOME is set, and HOME is not set either",
      );
    }
    [root, source] = [resolve(join(home, ".penguin", "data")), "the default under HOME"];
  }
  if (!opts.anyKind) checkDirectory(root, source);
  return root;
}

/** Throw a config error when `root` exists as something other than a directory, or lies under a file. */
function checkDirectory(root: string, source: string): void {
  let problem: string | undefined;
  try {
    if (!Deno.statSync(root).isDirectory) problem = "it is a file, not a directory";
  } catch (err) {
    if (err instanceof Deno.errors.NotADirectory) problem = "a part of its path is a file";
    else if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  if (problem !== undefined) {
    throw new PenguinError(
      "config",
      `Cannot use the data root "${root}" (from ${source}): ${problem}. ` +
        "Give --root or PENGUIN_HOME a directory (it is created when missing).",
    );
  }
}
