/**
 * Credential files planted at any depth inside the toolchain directories a
 * hidden home shows (`home.ts` TOOLCHAIN_PATHS): a `.netrc` in
 * `~/.cache/pip`, a `settings-security.xml` in `~/.m2/repository`, a
 * `.credentials` in `~/.deno`. Found by name ({@linkcode isCredentialFileName})
 * in a breadth-first walk of the top levels of each shown directory (its
 * entries and two levels below, {@linkcode MAX_WALK_DEPTH}), bounded by
 * {@linkcode MAX_WALK_ENTRIES} entries per directory (links below the top not
 * followed), and hidden by the plan like the home secrets. Deeper files, and
 * files past the budget of a large directory, are not looked for: a full walk
 * of the usual toolchains takes seconds (280,000 entries for rustup, pyenv
 * and Deno's cache on the machine this was measured on).
 * Each directory is walked once per process (the
 * toolchains are read-only to commands, so only the user or their tools add
 * files there); a file added later in the same process is not seen.
 *
 * @module
 */
import { join } from "node:path";

/** Entries listed at most in one shown directory (its levels breadth first). */
export const MAX_WALK_ENTRIES = 4096;

/** Levels walked below a shown directory: its entries, theirs, and theirs (`a/b/.netrc`). */
export const MAX_WALK_DEPTH = 2;

/** Exact names of well-known credential files. */
const NAMES = new Set([
  ".netrc",
  "_netrc",
  ".npmrc",
  ".yarnrc.yml",
  ".pypirc",
  ".git-credentials",
  ".pgpass",
  ".my.cnf",
  ".s3cfg",
  ".boto",
  ".dockercfg",
  "credentials",
  "credentials.json",
  "credentials.toml",
  "credentials.xml",
  "settings-security.xml",
  "gradle.properties",
  "id_rsa",
  "id_dsa",
  "id_ecdsa",
  "id_ed25519",
  "kaggle.json",
  "auth.json",
]);

/**
 * Whether `name` is a well-known credential file's name, in any letter case
 * (`NETRC`, `Credentials.json`), or names a credential or a netrc anywhere in
 * it (`application_default_credentials.json`, `credentials.yaml`, `.credentials*`).
 */
export function isCredentialFileName(name: string): boolean {
  const lower = name.toLowerCase();
  return NAMES.has(lower) || lower.includes("credential") || lower.includes("netrc");
}

const cache = new Map<string, Promise<string[]>>();

/**
 * The credential files (by name) inside `dirs`, at the paths given (lexical;
 * a directory that is a link is entered). Each directory is walked once per process.
 */
export async function credentialFilesIn(dirs: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const dir of dirs) {
    let hit = cache.get(dir);
    if (hit === undefined) {
      hit = walk(dir);
      cache.set(dir, hit);
    }
    out.push(...await hit);
  }
  return out;
}

async function walk(top: string): Promise<string[]> {
  const found: string[] = [];
  // Breadth first, so the budget goes to the shallow levels where such files are kept.
  let budget = MAX_WALK_ENTRIES;
  let level = [top];
  for (let depth = 0; depth <= MAX_WALK_DEPTH && level.length > 0 && budget > 0; depth++) {
    const next: string[] = [];
    for (const dir of level) {
      if (budget <= 0) break;
      try {
        for await (const e of Deno.readDir(dir)) {
          if (--budget < 0) break;
          const path = join(dir, e.name);
          if (isCredentialFileName(e.name)) found.push(path);
          else if (e.isDirectory) next.push(path);
        }
      } catch {
        // Unreadable (or a file): nothing to show from it either.
      }
    }
    level = next;
  }
  return found;
}
