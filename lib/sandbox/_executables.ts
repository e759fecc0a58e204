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

/** The programs {@linkcode findBash} and {@linkcode findSh} found, once per process. */
const found = new Map<string, string | undefined>();

/**
 * The `name` (bash, sh) Deno's `--allow-run=<name>` resolved at startup:
 * the first on the parent's PATH, else in /usr/bin or /bin (Deno compares
 * spawn paths literally, so penguin must run that one, and no other).
 * Looked up once per process, as Deno does: a `bash` a command writes later
 * into a directory on PATH (an activated `.venv/bin` in the workspace) is
 * never the one penguin runs on the host (attack round 24 perms B5: looked
 * up again for every use, it ran 16 times in a three-command session under
 * `-A`).
 */
function startupProgram(name: string): string | undefined {
  if (!found.has(name)) {
    found.set(
      name,
      [...pathDirs(), "/usr/bin", "/bin"].map((d) => join(d, name)).find(isExecutableNow),
    );
  }
  return found.get(name);
}

function isExecutableNow(path: string): boolean {
  try {
    const s = Deno.statSync(path);
    return s.isFile && ((s.mode ?? 0o755) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** The bash penguin runs on the host (see {@linkcode startupProgram}). */
export function findBash(): Promise<string | undefined> {
  return Promise.resolve(startupProgram("bash"));
}

/**
 * The `sh` penguin runs on the host (see {@linkcode startupProgram}): with
 * another `sh` first on the user's PATH, Deno refused `/usr/bin/sh`, and
 * every session failed to start (attack round 24 perms a04).
 */
export function findSh(): string | undefined {
  return startupProgram("sh");
}
