/**
 * Git repositories inside what penguin takes in from outside (snapshots,
 * skills): a `.git` entry (a directory or a `gitdir:` file, any case) at any
 * depth, or a directory git takes for a bare repository. The user's host git
 * runs what such a repository's configuration and hooks name
 * (`core.fsmonitor`, `post-checkout`) whenever the user, a git-aware shell
 * prompt or an editor runs git inside it, and a repository already present
 * when a session starts is taken as the user's, never disarmed
 * (lib/sandbox/git_nested.ts). So none is taken in (docs/security.md).
 *
 * @module
 */

/** Why a repository is not taken in, in words. */
export const GIT_REPO_REASON =
  "a git repository (the host's git would run what its configuration and hooks name)";

/** The first `.git` part of `rel` and what leads to it (`a/.git/x` → `a/.git`), or undefined. */
export function dotGitIn(rel: string): string | undefined {
  const parts = rel.split("/");
  const at = parts.findIndex((p) => p.toLowerCase() === ".git");
  return at < 0 ? undefined : parts.slice(0, at + 1).join("/");
}

/**
 * The directories that git would take for a repository themselves, given
 * `paths` (relative, `/`-separated, files and directories; a path implies its
 * parents): one holding `HEAD` with `objects` and `refs` or `config` (git
 * needs `refs`, but a directory missing only that is one `mkdir` from being
 * one), or `HEAD` with `commondir`. Outermost first; none inside another
 * listed (`""` is the top itself).
 */
export function bareRepoDirs(paths: Iterable<string>): string[] {
  const children = new Map<string, Set<string>>();
  for (const path of paths) {
    const parts = path.split("/").filter((p) => p !== "");
    for (let i = 0; i < parts.length; i++) {
      const dir = parts.slice(0, i).join("/");
      let names = children.get(dir);
      if (names === undefined) children.set(dir, names = new Set());
      names.add(parts[i]!);
    }
  }
  const found = [...children].filter(([, n]) =>
    n.has("HEAD") &&
    ((n.has("objects") && (n.has("refs") || n.has("config"))) || n.has("commondir"))
  ).map(([dir]) => dir).sort();
  const inside = (dir: string, outer: string) => outer === "" || dir.startsWith(`${outer}/`);
  return found.filter((dir) => !found.some((o) => o !== dir && inside(dir, o)));
}
