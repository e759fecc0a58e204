/**
 * The warning for a `PATH` that names directories relative to where a
 * program runs (`./node_modules/.bin`, `bin`, an empty entry for the current
 * directory). The user's shell, and git (which runs its programs from the
 * top of the work tree: a `textconv`, the pager, `ssh` for a fetch, even
 * `git` itself from the user's shell), then find a program the model wrote
 * in the workspace before the system's. penguin cannot keep such a
 * directory from commands without breaking the tools that fill it (`npm
 * install` writes `node_modules/.bin`), so it says so once per session
 * (attack round 19 concgit R1).
 *
 * @module
 */

/** The entries of `path` (a `PATH` value) that are relative or empty, each once. */
export function relativePathEntries(path: string | undefined): string[] {
  if (path === undefined) return [];
  const out: string[] = [];
  for (const entry of path.split(":")) {
    if (entry.startsWith("/")) continue;
    const shown = entry === "" ? "(empty: the current directory)" : entry;
    if (!out.includes(shown)) out.push(shown);
  }
  return out;
}

/** The warning for the relative entries of `path`, or undefined when it has none. */
export function relativePathWarning(path: string | undefined): string | undefined {
  const entries = relativePathEntries(path);
  if (entries.length === 0) return undefined;
  return `your PATH holds ${entries.length === 1 ? "an entry" : "entries"} relative to the ` +
    `current directory (${entries.join(", ")}): a program a command writes there in the ` +
    `workspace runs instead of the system's when you, or git, call it by name in the workspace. ` +
    `penguin cannot keep those directories from commands; make every PATH entry absolute (see ` +
    `"Git" in docs/security.md)`;
}
