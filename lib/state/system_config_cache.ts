/**
 * An agent's `system_config.yaml`, read at every start, parsed only when it
 * changed: the parsed and validated value is kept in
 * `<agent>/.system_config.cache.json` (0600), keyed by the SHA-256 of the
 * exact bytes of the file, so an unchanged file costs a JSON read and a
 * schema check instead of the YAML library's load and a parse.
 *
 * The cache is in the agent directory, beside `agent_state/` and not in it:
 * a snapshot packs `agent_state/` (the cache holds MCP secrets a snapshot
 * strips) and an import unpacks one (a cache planted in an archive could
 * make penguin run a configuration its file does not hold). The data root
 * is hidden from the model's commands.
 *
 * The cache is used only when its format, penguin's version and the hash
 * all match and its value passes the schema again; anything else (missing,
 * unreadable, corrupt, too large, stale) is ignored and the file parsed, so
 * a bad file's error (file, line and column) always comes from a real
 * parse. It is written, atomically, only after a successful parse, and only
 * when the value survives JSON unchanged; a failed write is ignored.
 *
 * @module
 */
import { isDeepStrictEqual } from "node:util";
import { dirname, join } from "node:path";
import { z } from "zod";
import { VERSION } from "../version.ts";
import { readUpTo, writeFileAtomic } from "./_fs.ts";
import { systemConfigSchema } from "./_system_config_schema.ts";
import type { SystemConfig } from "./system_config.ts";
import { hexOf } from "../protocol/hex.ts";

/** The cache's layout; a change of layout changes the number. */
const FORMAT = 1;
/** Bytes a cache may hold (a configuration file holds at most 2 Mi characters). */
const MAX_CACHE_BYTES = 16 * 1024 * 1024;

const cacheSchema = z.object({
  format: z.literal(FORMAT),
  penguin: z.literal(VERSION),
  sha256: z.string(),
  config: systemConfigSchema,
});

/** `<agent>/.system_config.cache.json` for the configuration at `<agent>/agent_state/system_config.yaml`. */
export function systemConfigCachePath(systemConfig: string): string {
  return join(dirname(dirname(systemConfig)), ".system_config.cache.json");
}

/** The hex SHA-256 of `bytes`. */
async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return hexOf(digest);
}

/** The cached configuration for content `hash`, or undefined when there is none that fits. */
async function cached(cachePath: string, hash: string): Promise<SystemConfig | undefined> {
  try {
    const bytes = await readUpTo(cachePath, MAX_CACHE_BYTES);
    if (bytes === undefined) return undefined;
    const parsed = cacheSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    if (!parsed.success || parsed.data.sha256 !== hash) return undefined;
    return parsed.data.config as SystemConfig;
  } catch {
    return undefined;
  }
}

/** Keep `config` for content `hash` when JSON holds it exactly; a failure only loses the cache. */
async function remember(cachePath: string, hash: string, config: SystemConfig): Promise<void> {
  try {
    const text = JSON.stringify({ format: FORMAT, penguin: VERSION, sha256: hash, config });
    if (!isDeepStrictEqual(JSON.parse(text).config, config)) return;
    await writeFileAtomic(cachePath, text, 0o600);
  } catch {
    // The next start parses again.
  }
}

/**
 * The configuration `bytes` (the content of the file at `path`) hold: from
 * the cache when it was parsed before, else parsed (errors name `path`, its
 * line and column) and then cached.
 */
export async function systemConfigOf(bytes: Uint8Array, path: string): Promise<SystemConfig> {
  const cachePath = systemConfigCachePath(path);
  const hash = await sha256(bytes);
  const hit = await cached(cachePath, hash);
  if (hit !== undefined) return hit;
  // Decoded as Deno.readTextFile does: invalid UTF-8 replaced, a byte order mark kept.
  const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
  const config = (await import("./system_config_parse.ts")).parseSystemConfig(text, path);
  await remember(cachePath, hash, config);
  return config;
}
