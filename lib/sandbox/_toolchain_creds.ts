/**
 * Credential files planted at any depth inside the toolchain directories a
 * home shows (`home.ts` TOOLCHAIN_PATHS, shown read-only in a hidden home
 * and in a sealed one): a `.netrc` in `~/.cache/pip`, a
 * `settings-security.xml` in `~/.m2/repository`, a `.credentials` in
 * `~/.deno`. Found by name ({@linkcode isCredentialFileName}) in one
 * breadth-first walk of all the shown directories together, level by level
 * to any depth, bounded by {@linkcode MAX_WALK_ENTRIES} entries in all (links
 * below the top not followed), and hidden by the plan like the home secrets.
 * Files past the budget (the deep levels of very large directories) are not
 * looked for: on the machine this was measured on, rustup, pyenv, npm, maven
 * and Deno's cache hold 316,000 entries (seconds to walk whole); the budget
 * covers all of their top five levels (12,000 entries) and part of the sixth.
 * The walk is done once per process for a given list of directories (the
 * toolchains are read-only to commands, so only the user or their tools add
 * files there); a file added later in the same process is not seen.
 *
 * @module
 */
import { join } from "node:path";
import { listDirNow } from "./_look.ts";

/** Entries listed at most in one walk of the shown directories (all levels, all directories). */
export const MAX_WALK_ENTRIES = 16384;

/** Levels below a shown directory where a directory is hidden for its name (`a/b/credentials`). */
export const MAX_DIR_DEPTH = 2;

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
  "pip.conf",
  "pip.ini",
]);

/**
 * Extensions of program code, compiled code and documentation: a
 * toolchain's own files (Python's `netrc.py`, botocore's `credentials.py`, a
 * crate's `credential.rs`, a manual's `credentials.html`), never hidden for
 * their name.
 */
const CODE_EXTENSIONS = new Set(
  (
    "py pyc pyo pyi pyd pyx pxd js mjs cjs ts mts cts jsx tsx map rs rlib rmeta go rb java " +
    "class jar kt kts scala groovy c h cc cpp cxx hpp hh cs fs swift m mm php pl pm lua ex exs " +
    "erl hrl hs hi ml mli cmi cmo cmx cmt cmti el elc clj so dylib dll a o d html htm md rst " +
    "1 3 gz svg css info"
  ).split(" "),
);

/**
 * Whether `name` is a well-known credential file's name, in any letter case
 * (`NETRC`, `Credentials.json`), or, for a file, names a credential or a
 * netrc anywhere in it (`application_default_credentials.json`,
 * `credentials.yaml`, `.credentials*`) without the extension of code or
 * documentation ({@linkcode CODE_EXTENSIONS}). A directory counts only by
 * the exact names (`credentials`), not one such as `cargo-credential-1.0`,
 * and only in the top levels of a shown directory ({@linkcode MAX_DIR_DEPTH}):
 * deeper, it is a package's (Python's `docker/credentials`).
 */
export function isCredentialFileName(name: string, isDirectory = false): boolean {
  const lower = name.toLowerCase();
  if (NAMES.has(lower)) return true;
  if (isDirectory) return false;
  const dot = lower.lastIndexOf(".");
  if (dot > 0 && CODE_EXTENSIONS.has(lower.slice(dot + 1))) return false;
  return lower.includes("credential") || lower.includes("netrc");
}

/**
 * Configuration files a toolchain reads that hold credentials only sometimes: Maven's global
 * `conf/settings.xml` (server passwords) and Gradle's `init.d` scripts (repository credentials),
 * which an SDK manager keeps inside the shown directories (`~/.sdkman/candidates/maven/<v>/conf`,
 * attack round 26 B15). Hidden only when their text names one ({@linkcode CONFIG_SECRET}): an
 * empty `settings.xml` would stop every Maven build.
 */
function mayHoldCredentials(dir: string, name: string): boolean {
  const lower = name.toLowerCase();
  if (lower === "settings.xml") return true;
  return /(^|\/)init\.d$/.test(dir) && /\.gradle(\.kts)?$/.test(lower);
}

/**
 * What a configuration file holding a credential says (XML elements, Groovy and Kotlin names):
 * a password, secret, token or key by name, an HTTP authorization header (`Authorization`,
 * Gradle's `HttpHeaderCredentials`, a `Bearer` or `Basic` value), or a URL with a password
 * (`https://user:pass@host`, a token alone) (attack round 27 d08: the last three were read).
 */
const CONFIG_SECRET = new RegExp(
  [
    "<(password|privateKey|passphrase)>",
    "passw(or)?d|passphrase|secret|token|api[-_]?key|credential",
    "authorization|\\b(bearer|basic)\\s+[A-Za-z0-9+/=._~-]{8,}",
    // A URL's user information of eight characters or more (`user:pass@`, a token alone); the
    // scheme's length bounded, or a long run of letters made the match quadratic.
    "\\b[a-z][a-z0-9+.-]{0,31}://[^\\s/@]{8,256}@",
  ].join("|"),
  "i",
);

/** Largest configuration file read for {@linkcode CONFIG_SECRET} (past it: hidden unread). */
const CONFIG_READ_LIMIT = 256 * 1024;

/** Whether the configuration file at `path` names a credential (or is too large to tell). */
function holdsCredentials(path: string): boolean {
  try {
    const f = Deno.openSync(path, { read: true });
    try {
      const buf = new Uint8Array(CONFIG_READ_LIMIT + 1);
      let n = 0;
      for (;;) {
        const got = f.readSync(buf.subarray(n));
        if (got === null || got === 0) break;
        n += got;
        if (n > CONFIG_READ_LIMIT) return true;
      }
      return CONFIG_SECRET.test(new TextDecoder().decode(buf.subarray(0, n)));
    } finally {
      f.close();
    }
  } catch {
    return false; // unreadable to penguin: unreadable to its commands too
  }
}

const cache = new Map<string, Promise<string[]>>();

/**
 * The credential files (by name) inside `dirs`, at the paths given (lexical;
 * a directory that is a link is entered). Walked once per process for the
 * same list.
 */
export function credentialFilesIn(dirs: readonly string[]): Promise<string[]> {
  const key = [...new Set(dirs)].join("\0");
  let hit = cache.get(key);
  if (hit === undefined) {
    hit = walk([...new Set(dirs)]);
    cache.set(key, hit);
  }
  return hit;
}

/** Entries listed between two turns of the event loop (the walk runs beside a session's start). */
const ENTRIES_PER_SLICE = 128;

async function walk(tops: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  // Breadth first over every directory at once, so the budget goes to the shallow levels (where
  // such files are kept) of all of them before the deep levels of any. Each directory is listed
  // synchronously (half the CPU of Deno's asynchronous listing, measured on 16,384 entries), and
  // the event loop gets a turn every ENTRIES_PER_SLICE entries, so a request or a stream in
  // flight is not held up. Below the tops (as given, which the kernel resolves), a child's path
  // is its parent's and its name joined as text, as `join` would: the parent is already a
  // normal path, and a listed name is never empty, `.`, `..` or holds a `/`.
  let budget = MAX_WALK_ENTRIES;
  let sinceTurn = 0;
  let level = [...tops];
  for (let depth = 0; level.length > 0 && budget > 0; depth++) {
    const next: string[] = [];
    for (const dir of level) {
      if (budget <= 0) break;
      const childOf = depth === 0
        ? (name: string) => join(dir, name)
        : (name: string) => dir === "/" ? `/${name}` : `${dir}/${name}`;
      try {
        for (const e of listDirNow(dir)) {
          if (--budget < 0) break;
          sinceTurn++;
          const path = childOf(e.name);
          const named = e.isDirectory
            ? depth <= MAX_DIR_DEPTH && isCredentialFileName(e.name, true)
            : isCredentialFileName(e.name);
          if (named) found.push(path);
          else if (e.isDirectory) next.push(path);
          else if (mayHoldCredentials(dir, e.name) && holdsCredentials(path)) found.push(path);
        }
      } catch {
        // Unreadable (or a file): nothing to show from it either.
      }
      if (sinceTurn >= ENTRIES_PER_SLICE) {
        sinceTurn = 0;
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    }
    level = next;
  }
  return found;
}
