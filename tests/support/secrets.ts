/**
 * Checks that a secret did not get out: the text of every file under a
 * directory ({@linkcode readAll}), a search for any piece of a secret
 * ({@linkcode assertNoPieceOf}), and a vault value set through the CLI
 * ({@linkcode setVault}).
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCliOk } from "./cli.ts";

/** Every file under `dir`, as text. */
export async function readAll(dir: string): Promise<string> {
  let out = "";
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) out += await readAll(p);
    else if (e.isFile) out += await Deno.readTextFile(p);
  }
  return out;
}

/** Fail when any `size`-character piece of one of `secrets` occurs in `text`, found at `where`. */
export function assertNoPieceOf(text: string, secrets: string[], where: string, size = 8): void {
  for (const secret of secrets) {
    for (let i = 0; i + size <= secret.length; i++) {
      const piece = secret.slice(i, i + size);
      assert.ok(!text.includes(piece), `${where} holds "${piece}", a piece of a secret`);
    }
  }
}

/** `penguin config vault set --key <key> --value <value>` in `root`; asserts it succeeded. */
export async function setVault(root: string, key: string, value: string): Promise<void> {
  await runCliOk(["--root", root, "config", "vault", "set", "--key", key, "--value", value]);
}
