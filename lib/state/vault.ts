/**
 * `.vault.toml`: per-agent environment variables for command subprocesses
 * A flat table of strings; mode 0600; emptying it removes
 * the file. Values never go into prompts or traces — only key names do.
 *
 * @module
 */
import { dirname } from "node:path";
import { stringify } from "smol-toml";
import { PenguinError } from "../protocol/errors.ts";
import { parseTomlText } from "./_config_errors.ts";
import { mkdirPrivate, readTextIfExists, writeFileAtomic } from "./_fs.ts";
import { validated } from "./_validated.ts";

/** Allowed vault key shape (an environment variable name). */
export const VAULT_KEY_PATTERN: RegExp = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Longest allowed vault value, in characters. */
export const VAULT_VALUE_MAX = 8192;

/** Vault entries by key. */
export type Vault = Record<string, string>;

/** Throw a usage error unless `key` is a valid vault key. */
export function validateVaultKey(key: string): string {
  const rule = 'use letters, digits and "_", not starting with a digit';
  return validated(VAULT_KEY_PATTERN.test(key), key, "vault key", rule);
}

/** Throw a usage error unless `value` fits the vault's size limit. */
export function validateVaultValue(key: string, value: string): string {
  if (value.length > VAULT_VALUE_MAX) {
    throw new PenguinError(
      "usage",
      `Vault value for ${key} is ${value.length} characters long; the limit is ${VAULT_VALUE_MAX}`,
    );
  }
  return value;
}

/**
 * Parse vault text. Entries with an invalid key, a non-string value or a
 * value over the limit are ignored; a TOML syntax error is a config error.
 */
export function parseVault(text: string, file: string): Vault {
  const raw = parseTomlText(text, file);
  const out: Vault = {};
  for (const [k, v] of Object.entries(raw)) {
    if (VAULT_KEY_PATTERN.test(k) && typeof v === "string" && v.length <= VAULT_VALUE_MAX) {
      out[k] = v;
    }
  }
  return out;
}

/** Read the vault at `path`; a missing file is an empty vault. Read fresh every time. */
export async function loadVault(path: string): Promise<Vault> {
  const text = await readTextIfExists(path);
  return text === undefined ? {} : parseVault(text, path);
}

/** Write `vault` to `path` (0600, atomic); an empty vault removes the file. */
export async function saveVault(path: string, vault: Vault): Promise<void> {
  const keys = Object.keys(vault);
  if (keys.length === 0) {
    await Deno.remove(path).catch((err) => {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    });
    return;
  }
  for (const k of keys) validateVaultValue(validateVaultKey(k), vault[k]!);
  await mkdirPrivate(dirname(path));
  await writeFileAtomic(path, stringify(vault), 0o600);
}

/** Set one key (validated) in the vault at `path`. */
export async function setVaultEntry(path: string, key: string, value: string): Promise<void> {
  validateVaultValue(validateVaultKey(key), value);
  const vault = await loadVault(path);
  vault[key] = value;
  await saveVault(path, vault);
}

/** Remove one key from the vault at `path`; resolves to false when it was not there. */
export async function removeVaultEntry(path: string, key: string): Promise<boolean> {
  const vault = await loadVault(path);
  if (!Object.hasOwn(vault, key)) return false;
  delete vault[key];
  await saveVault(path, vault);
  return true;
}
