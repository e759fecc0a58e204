/**
 * Which data roots penguin made: a mark in each, only penguin can write.
 *
 * A data root decides where API keys go, which programs penguin starts on the
 * host (MCP servers) and which workspace files are trusted. A directory a
 * model's command made before penguin first used it as a root (inside a
 * workspace, later given as `--root` or `PENGUIN_HOME`) must not be taken as
 * the user's (attack round 25 concgit repro06). So penguin marks each root it
 * makes, or that the user adopts:
 *
 * ```
 * <key dir>/root.key   32 random bytes, hex (0600; <key dir> 0700)
 * <root>/.root_mark    "penguin-root-mark v1 <HMAC-SHA256(key, real path, device, inode)>" (0600)
 * ```
 *
 * The key directory is `PENGUIN_KEY_DIR`, else `~/.penguin` (hidden from
 * every sandbox with the rest of `~/.penguin`, see `lib/sandbox/policy.ts`):
 * no command can read the key, so none can forge a mark, and a mark copied
 * from another root names another directory. A root moved or copied by the
 * user is asked about once again.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import { mkdirPrivate, readUpTo, writeFileAtomic } from "./_fs.ts";
import { hexOf } from "../protocol/hex.ts";

/** The mark's file name in a data root. */
export const ROOT_MARK_FILE = ".root_mark";

/** The key's file name in the key directory. */
export const ROOT_KEY_FILE = "root.key";

const MARK_PREFIX = "penguin-root-mark v1 ";

/** Where the key lives: `PENGUIN_KEY_DIR`, else `$HOME/.penguin`; undefined without either. */
export function rootKeyDir(
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): string | undefined {
  const set = env("PENGUIN_KEY_DIR");
  if (set !== undefined && set !== "") return resolve(set);
  const home = env("HOME");
  return home !== undefined && home.startsWith("/") ? join(home, ".penguin") : undefined;
}

/** Options of the functions here. */
export interface RootMarkOptions {
  /** The key directory (default: {@linkcode rootKeyDir}). */
  keyDir?: string | undefined;
}

/** What a data root is, as far as its mark tells. */
export type RootStatus =
  /** Not there yet. */
  | "missing"
  /** Marked by penguin with this user's key. */
  | "marked"
  /** Not marked, and empty: nothing in it to trust. */
  | "empty"
  /** Not marked (or marked with another key, or for another directory), and not empty. */
  | "foreign"
  /** No key can be had (no HOME, no PENGUIN_KEY_DIR): nothing can be told. */
  | "unknown";

const keys = new Map<string, Promise<CryptoKey>>();

/** The key at `dir`, made when missing (`create`); undefined when there is none to read. */
function loadKey(dir: string, create: boolean): Promise<CryptoKey | undefined> {
  const hit = keys.get(dir);
  if (hit) return hit;
  const made = readOrMakeKey(dir, create);
  return made.then((k) => {
    if (k !== undefined) keys.set(dir, Promise.resolve(k));
    return k;
  });
}

async function readOrMakeKey(dir: string, create: boolean): Promise<CryptoKey | undefined> {
  const path = join(dir, ROOT_KEY_FILE);
  let hex = await readKeyText(path);
  if (hex === undefined && create) {
    await mkdirPrivate(dir);
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    const fresh = hexOf(bytes);
    try {
      const f = await Deno.open(path, { write: true, createNew: true, mode: 0o600 });
      try {
        await f.write(new TextEncoder().encode(`${fresh}\n`));
        await f.sync();
      } finally {
        f.close();
      }
      hex = fresh;
    } catch (err) {
      // Another penguin made it first: its key is the one.
      if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
      hex = await readKeyText(path);
    }
  }
  if (hex === undefined) return undefined;
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new PenguinError(
      "config",
      `Cannot read penguin's data root key "${path}": it is not 64 hexadecimal digits. ` +
        "Remove the file: penguin makes a new one, and asks once about each data root again",
    );
  }
  const raw = new Uint8Array(hex.match(/../g)!.map((h) => parseInt(h, 16)));
  return await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
}

async function readKeyText(path: string): Promise<string | undefined> {
  const info = await Deno.lstat(path).catch(() => undefined);
  if (info === undefined) return undefined;
  if (!info.isFile) {
    throw new PenguinError(
      "config",
      `Cannot read penguin's data root key "${path}": it is not a regular file`,
    );
  }
  const bytes = await readUpTo(path, 256);
  return bytes === undefined ? undefined : new TextDecoder().decode(bytes).trim();
}

/** The mark `root` (a directory, by its real path, device and inode) carries under `key`. */
async function markOf(key: CryptoKey, root: string): Promise<string> {
  const real = await Deno.realPath(root);
  const info = await Deno.stat(real);
  const text = `${real}\0${info.dev}\0${info.ino ?? 0}`;
  const sig = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(text));
  const hex = hexOf(sig);
  return `${MARK_PREFIX}${hex}\n`;
}

/** Whether `root` carries a valid mark under `key`. */
async function carriesMark(key: CryptoKey, root: string): Promise<boolean> {
  const path = join(root, ROOT_MARK_FILE);
  const info = await Deno.lstat(path).catch(() => undefined);
  if (info === undefined || !info.isFile || info.size > 256) return false;
  const bytes = await readUpTo(path, 256);
  if (bytes === undefined) return false;
  return new TextDecoder().decode(bytes) === await markOf(key, root);
}

/** The entries of `root` besides its mark. */
export async function rootEntries(root: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(root)) {
    if (e.name !== ROOT_MARK_FILE) out.push(e.isDirectory ? `${e.name}/` : e.name);
  }
  return out.sort();
}

/** What `root` is: missing, marked, empty, foreign, or unknown (no key to be had). */
export async function rootStatus(root: string, opts: RootMarkOptions = {}): Promise<RootStatus> {
  const info = await Deno.stat(root).catch(() => undefined);
  if (info === undefined) return "missing";
  if (!info.isDirectory) return "foreign";
  const dir = opts.keyDir ?? rootKeyDir();
  if (dir === undefined) return "unknown";
  const key = await loadKey(dir, false);
  if (key !== undefined && await carriesMark(key, root)) return "marked";
  return (await rootEntries(root)).length === 0 ? "empty" : "foreign";
}

/** Mark `root` (an existing directory) as penguin's, making the key when there is none yet. */
export async function markDataRoot(root: string, opts: RootMarkOptions = {}): Promise<void> {
  const dir = opts.keyDir ?? rootKeyDir();
  if (dir === undefined) return;
  const key = (await loadKey(dir, true))!;
  await writeFileAtomic(join(root, ROOT_MARK_FILE), await markOf(key, root), 0o600);
}
