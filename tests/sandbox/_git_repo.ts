// The layout of the git guard tests that run the user's host git beside a
// sandbox: a workspace and a HOME side by side in a visible temp directory,
// and the marker file planted code would leave next to them.
import { join } from "node:path";
import { visibleTempDir } from "./_helpers.ts";

/** A workspace, a HOME, and where planted code leaves its mark, all below `base`. */
export interface Repo {
  base: string;
  ws: string;
  home: string;
  /** Created by a planted command when host git runs it; outside every writable root. */
  marker: string;
}

/** The {@linkcode Repo} layout below `base` (nothing is made). */
export function repoIn(base: string): Repo {
  return { base, ws: join(base, "ws"), home: join(base, "home"), marker: join(base, "PWNED") };
}

/** Run `fn` with a fresh {@linkcode Repo} (`ws` and `home` made) in a `prefix` temp dir, removed afterwards. */
export async function withRepoDirs(prefix: string, fn: (r: Repo) => Promise<void>): Promise<void> {
  const r = repoIn(await Deno.realPath(await visibleTempDir(prefix)));
  await Deno.mkdir(r.ws);
  await Deno.mkdir(r.home);
  try {
    await fn(r);
  } finally {
    await Deno.remove(r.base, { recursive: true });
  }
}
