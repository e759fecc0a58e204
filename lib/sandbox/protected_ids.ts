/**
 * The identities (device and inode) of the files penguin protects outside
 * the file tools' roots that have other names (hard links), for the file
 * tools: a confined tool worker cannot read the home, so the host resolves
 * them and passes the list on (`lib/tools/worker/pool.ts`), and
 * `lib/tools/workspace_path.ts` refuses a path whose file is one of them.
 *
 * The files are those `_protected_files.ts` looks at for commands: every
 * regular file of a hidden home (outside the roots and the shown toolchain
 * directories, within the walk's budget) and of git's `init.templateDir`,
 * and the named ones: the home's startup files and what they source or
 * name, git's global and system configuration with its includes and hooks,
 * the programs of the home's `PATH` directories. The hide list's files are
 * secret (never read or written), the others kept (read, never written).
 * Only regular files with more than one name on a root's file system are
 * listed, so the list is usually empty.
 *
 * @module
 */
import { isAbsolute } from "node:path";
import { accountHome, expandSecretPatterns } from "./home.ts";
import { homeSecrets } from "./policy.ts";
import { realOf } from "./_paths.ts";
import { lstatOrNone } from "./_look.ts";
import { protectedWithOtherNames } from "./_protected_files.ts";

/** One protected file with other names: its identity, its path and how it is protected. */
export interface ProtectedFileId {
  /** Device of the file (`stat`'s `dev`). */
  dev: number;
  /** Inode of the file. */
  ino: number;
  /** The protected name (outside the roots), for refusals. */
  path: string;
  /** `secret`: never read nor written; `kept`: read, never written. */
  kind: "secret" | "kept";
}

/** What {@linkcode protectedFileIds} looks at. */
export interface ProtectedIdsQuery {
  /** Real paths of the directories the file tools reach (their other names lie there). */
  roots: readonly string[];
  /** The user's home directory; absent: none (the account's home is looked at anyway). */
  home?: string | undefined;
  /** The sandbox's hide list; absent: the home's secrets. */
  hide?: readonly string[] | undefined;
  /** The `PATH` directories (the home's hold programs the user runs). */
  pathDirs?: readonly string[] | undefined;
}

const cache = new Map<string, Promise<ProtectedFileId[]>>();

/**
 * The protected files outside `q.roots` with more than one name (see the
 * module); once per process and query, like the search it uses.
 */
export function protectedFileIds(q: ProtectedIdsQuery): Promise<ProtectedFileId[]> {
  const key = JSON.stringify([q.roots, q.home, q.hide, q.pathDirs]);
  let found = cache.get(key);
  if (found === undefined) {
    found = search(q);
    cache.set(key, found);
    found.catch(() => cache.delete(key));
  }
  return found;
}

async function search(q: ProtectedIdsQuery): Promise<ProtectedFileId[]> {
  const homes: string[] = [];
  const secrets: string[] = [...(q.hide ?? [])];
  for (const h of [q.home, await accountHome()]) {
    if (h === undefined || !isAbsolute(h)) continue;
    const real = await realOf(h);
    if (real === undefined || real === "/" || homes.includes(real)) continue;
    homes.push(real);
    if (q.hide === undefined || h !== q.home) secrets.push(...homeSecrets(h));
    secrets.push(...await expandSecretPatterns(h));
  }
  const found = await protectedWithOtherNames({
    homes,
    secrets,
    pathDirs: q.pathDirs ?? [],
    roots: q.roots,
  });
  const out: ProtectedFileId[] = [];
  const add = (path: string, kind: ProtectedFileId["kind"]) => {
    const info = lstatOrNone(path);
    if (info?.dev === null || info?.dev === undefined || info.ino === null) return;
    out.push({ dev: info.dev, ino: info.ino, path, kind });
  };
  for (const p of found.secret) add(p, "secret");
  for (const p of found.kept) add(p, "kept");
  return out;
}
