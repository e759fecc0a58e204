/**
 * The git configuration sandboxed commands see in place of the user's own.
 * A user's `~/.gitconfig` (and `~/.config/git/config`) often holds
 * credentials: a token in a `url.<base>.insteadOf` URL, an
 * `http.extraHeader: Authorization …`, a `credential.helper` command line.
 * Commands get a sanitized copy instead, with only the identity and
 * behaviour keys of {@linkcode SAFE_GIT_KEYS}: no `url.*`, `http.*`,
 * `credential.*`, `include*`, `alias.*` or any key of a subsection. It is
 * written into penguin's private run directory (hidden from every command,
 * see `_standin_registry.ts`), one file per content, and bound read-only at
 * `~/.gitconfig` by the home plan (`_home_plan.ts`); the real file stays
 * hidden.
 *
 * @module
 */
import { readRegularTextNow } from "./_look.ts";
import { join } from "node:path";
import { parseGitConfig } from "./git_config_parse.ts";
import { privateRunDir } from "./_standin_registry.ts";
import { hexOf } from "../protocol/hex.ts";

/** The keys kept (lower-cased, as the parser returns them); every other key is dropped. */
export const SAFE_GIT_KEYS: readonly string[] = [
  "user.name",
  "user.email",
  "init.defaultbranch",
  "core.autocrlf",
  "core.eol",
  "core.filemode",
  "core.quotepath",
  "safe.directory",
  "pull.rebase",
  "pull.ff",
  "push.default",
  "merge.conflictstyle",
  "diff.algorithm",
  "color.ui",
];

/** Largest configuration file read; a larger one contributes nothing. */
const MAX_CONFIG_BYTES = 1 << 20;

/** A value written in git's quoted form; undefined when it holds a control character. */
function quoted(value: string): string | undefined {
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x1f\x7f]/.test(value)) return undefined;
  return `"${value.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/**
 * The sanitized configuration of `texts` (the files in the order git reads
 * them): the {@linkcode SAFE_GIT_KEYS} entries, in order, as a config file
 * (empty when none).
 */
export function sanitizeGitConfig(texts: readonly { text: string; file: string }[]): string {
  const sections = new Map<string, string[]>();
  for (const { text, file } of texts) {
    for (const e of parseGitConfig(text, file).entries) {
      if (!SAFE_GIT_KEYS.includes(e.key)) continue;
      const dot = e.key.indexOf(".");
      const value = e.value === null ? "true" : quoted(e.value);
      if (value === undefined) continue;
      const section = e.key.slice(0, dot);
      const lines = sections.get(section) ?? [];
      lines.push(`\t${e.key.slice(dot + 1)} = ${value}`);
      sections.set(section, lines);
    }
  }
  let out = "";
  for (const [section, lines] of sections) out += `[${section}]\n${lines.join("\n")}\n`;
  return out;
}

function readSmall(path: string): Promise<string | undefined> {
  // Opened without blocking: a FIFO swapped in for the file must not stop the plan (attack round 22).
  return Promise.resolve(readRegularTextNow(path, MAX_CONFIG_BYTES));
}

/**
 * The private file holding the sanitized global configuration of `home`
 * (`~/.config/git/config`, then `~/.gitconfig`), or undefined when the home
 * has neither (or the run directory cannot be written).
 */
export async function sanitizedGitConfigFile(home: string): Promise<string | undefined> {
  const texts: { text: string; file: string }[] = [];
  for (const file of [join(home, ".config", "git", "config"), join(home, ".gitconfig")]) {
    const text = await readSmall(file);
    if (text !== undefined) texts.push({ text, file });
  }
  if (texts.length === 0) return undefined;
  const content = sanitizeGitConfig(texts);
  try {
    const bytes = new TextEncoder().encode(content);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    const hash = hexOf(digest.subarray(0, 8));
    const dir = await privateRunDir();
    const path = join(dir, `gitconfig-${hash}`);
    const now = await Deno.readTextFile(path).catch(() => undefined);
    if (now === content) return path;
    // Written beside and renamed into place: no sandbox binds half a file.
    const tmp = join(dir, `.gitconfig-${crypto.randomUUID()}`);
    await Deno.writeTextFile(tmp, content, { mode: 0o600 });
    await Deno.rename(tmp, path);
    return path;
  } catch {
    return undefined;
  }
}
