/**
 * The data roots penguin has used on this machine. Any penguin command that
 * opens a data root (`--root`, `PENGUIN_HOME` or the default) notes it in
 * `data-roots` in penguin's private run directory (`privateRunDir()`, which
 * every plan hides), and every plan hides each root noted in the list of any
 * run directory (`privateRunDirs()`) that still exists:
 * a session of one root cannot read another root's vault, traces, server
 * logs or trust records. Noting is best effort: a run directory that cannot
 * be made leaves the list as it was.
 *
 * @module
 */
import { dirname, join, resolve } from "node:path";
import { privateRunDir, privateRunDirs } from "./_standin_registry.ts";

const FILE = "data-roots";

async function listPath(): Promise<string> {
  return join(await privateRunDir(), FILE);
}

/** The roots noted in the list at `path` (absolute, in the order first used); none when unreadable. */
async function readList(path: string): Promise<string[]> {
  const text = await Deno.readTextFile(path).catch(() => "");
  return [...new Set(text.split("\n").filter((l) => l.startsWith("/")))];
}

/**
 * The data roots noted so far (absolute, in the order first used): this
 * process's list, then those of the other run directories a penguin of the
 * user keeps (`privateRunDirs()`: one started with another `PENGUIN_RUN_DIR`
 * notes its roots there). None from a list that cannot be read.
 */
export async function knownDataRoots(): Promise<string[]> {
  const own = await listPath().then(readList, () => []);
  const out = new Set(own);
  for (const dir of await privateRunDirs().catch(() => [])) {
    for (const r of await readList(join(dir, FILE))) out.add(r);
  }
  return [...out];
}

/**
 * Whether a noted root is kept in the list: it exists, or its parent directory does (a root is
 * noted before the command that makes it has run: dropped then, a root holding only a vault
 * would stay visible to other sessions until its next command). A root whose parent is gone too
 * (a test's temporary directory) is dropped.
 */
async function mayStillBeUsed(root: string): Promise<boolean> {
  if (await Deno.lstat(root).then(() => true, () => false)) return true;
  return await Deno.lstat(dirname(root)).then((i) => i.isDirectory, () => false);
}

/** Roots kept at most (the most recently noted); older ones are dropped. */
const MAX_ROOTS = 256;

/**
 * Note `root` as a data root penguin uses. The list is rewritten (a new file
 * renamed over the old one) without the roots that are gone together with
 * their parent directory (a test's temporary root) and with at most {@linkcode MAX_ROOTS}
 * entries, under an exclusive lock so that no process drops another's
 * new entry.
 */
export async function rememberDataRoot(root: string): Promise<void> {
  const abs = resolve(root);
  if (abs === "/" || abs.includes("\n")) return;
  let lock: Deno.FsFile | undefined;
  try {
    // One writer at a time (an exclusive lock beside the list): a rewrite must not drop a root
    // another process noted meanwhile, which would leave that root visible to every session.
    lock = await Deno.open(`${await listPath()}.lock`, {
      read: true,
      write: true,
      create: true,
      mode: 0o600,
    });
    await lock.lock(true);
    const known = await readList(await listPath());
    const alive: string[] = [];
    for (const r of known) {
      if (r !== abs && await mayStillBeUsed(r)) alive.push(r);
    }
    if (known.includes(abs) && alive.length === known.length - 1) return;
    const list = [...alive, abs].slice(-MAX_ROOTS);
    const path = await listPath();
    const tmp = `${path}.${crypto.randomUUID()}.tmp`;
    await Deno.writeTextFile(tmp, list.map((r) => `${r}\n`).join(""), { mode: 0o600 });
    await Deno.rename(tmp, path);
  } catch {
    // Best effort: without a run directory there is no list (and no plan either).
  } finally {
    lock?.close();
  }
}
