/**
 * The data roots penguin has used on this machine. Any penguin command that
 * opens a data root (`--root`, `PENGUIN_HOME` or the default) notes it in
 * `data-roots` in penguin's private run directory (`privateRunDir()`, which
 * every plan hides), and every plan hides each noted root that still exists:
 * a session of one root cannot read another root's vault, traces, server
 * logs or trust records. Noting is best effort: a run directory that cannot
 * be made leaves the list as it was.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { privateRunDir } from "./_standin_registry.ts";

const FILE = "data-roots";

async function listPath(): Promise<string> {
  return join(await privateRunDir(), FILE);
}

/** The data roots noted so far (absolute, in the order first used); none when unreadable. */
export async function knownDataRoots(): Promise<string[]> {
  const text = await listPath().then((p) => Deno.readTextFile(p)).catch(() => "");
  return [...new Set(text.split("\n").filter((l) => l.startsWith("/")))];
}

/**
 * Note `root` as a data root penguin uses. Appends one line when it is new
 * (a line append is atomic, so concurrent processes at worst note it twice).
 */
export async function rememberDataRoot(root: string): Promise<void> {
  const abs = resolve(root);
  if (abs === "/" || abs.includes("\n")) return;
  try {
    if ((await knownDataRoots()).includes(abs)) return;
    await Deno.writeTextFile(await listPath(), `${abs}\n`, { append: true, mode: 0o600 });
  } catch {
    // Best effort: without a run directory there is no list (and no plan either).
  }
}
