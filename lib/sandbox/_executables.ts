/**
 * Finding the programs penguin runs: bash (named in penguin's `run`
 * permission) and executable files on PATH.
 *
 * @module
 */
import { join } from "node:path";

/** True when `path` is an executable regular file. */
export async function isExecutable(path: string): Promise<boolean> {
  try {
    const s = await Deno.stat(path);
    return s.isFile && ((s.mode ?? 0o755) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** The absolute directories of PATH. */
export function pathDirs(): string[] {
  return (Deno.env.get("PATH") ?? "").split(":").filter((d) => d.startsWith("/"));
}

/** The bash {@linkcode findBash} found, once per process. */
let bash: Promise<string | undefined> | undefined;

/**
 * The bash Deno's `--allow-run=bash` resolved at startup: the first `bash`
 * on the parent's PATH (Deno compares spawn paths literally). Looked up
 * once per process, as Deno does: a `bash` a command writes later into a
 * directory on PATH (an activated `.venv/bin` in the workspace) is never
 * the one penguin runs on the host (attack round 24 perms B5: looked up
 * again for every use, it ran 16 times in a three-command session under
 * `-A`).
 */
export function findBash(): Promise<string | undefined> {
  bash ??= lookUpBash();
  return bash;
}

async function lookUpBash(): Promise<string | undefined> {
  for (const d of [...pathDirs(), "/usr/bin", "/bin"]) {
    if (await isExecutable(join(d, "bash"))) return join(d, "bash");
  }
  return undefined;
}
