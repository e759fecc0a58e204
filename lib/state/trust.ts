/**
 * The trust store: which workspace policy files (`penguin.jsonc`) the user
 * has trusted, each by its path and the SHA-256 of its exact content.
 *
 * ```
 * <root>/.trust/<sha256 of the path>.json   {"path", "sha256", "trusted_at"} (0600)
 * ```
 *
 * One small file per trusted path, written atomically, so `penguin trust`
 * runs never interleave. The store lives in the data root, which every
 * sandbox hides, so the model's commands can neither read nor write it. A
 * record trusts one content at one path: a file whose content changed, or
 * the same content at another path, is not trusted.
 *
 * @module
 */
import { parseJsonBounded } from "../protocol/bounded_json.ts";
import { join } from "node:path";
import { fsFailure, mkdirPrivate, readTextIfExists, writeFileAtomic } from "./_fs.ts";
import { hexOf } from "../protocol/hex.ts";

/** The directory of the trust store under a data root. */
export const TRUST_DIR = ".trust";

/** One trusted file. */
export interface TrustRecord {
  /** Absolute path of the file (its directory's real path, then its name). */
  path: string;
  /** SHA-256 of the file's exact bytes, lowercase hex. */
  sha256: string;
  /** When the user trusted it (ISO 8601). */
  trusted_at: string;
}

/** Whether a file's current content is trusted: yes, it was but has changed since, or never. */
export type TrustStatus = "trusted" | "changed" | "untrusted";

/** `<root>/.trust`. */
export function trustDir(root: string): string {
  return join(root, TRUST_DIR);
}

function hex(buf: ArrayBuffer): string {
  return hexOf(buf);
}

/** SHA-256 of `bytes` as lowercase hex. */
export async function sha256Hex(bytes: Uint8Array | string): Promise<string> {
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  return hex(await crypto.subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>));
}

async function recordPath(root: string, path: string): Promise<string> {
  return join(trustDir(root), `${await sha256Hex(path)}.json`);
}

function isRecord(v: unknown): v is TrustRecord {
  if (typeof v !== "object" || v === null) return false;
  const r = v as Record<string, unknown>;
  return typeof r.path === "string" && typeof r.trusted_at === "string" &&
    typeof r.sha256 === "string" && /^[0-9a-f]{64}$/.test(r.sha256);
}

function parseRecord(text: string): TrustRecord | undefined {
  try {
    const v = parseJsonBounded(text, "a trust record");
    return isRecord(v) ? { path: v.path, sha256: v.sha256, trusted_at: v.trusted_at } : undefined;
  } catch {
    return undefined;
  }
}

/** The record for `path`, or undefined when there is none (or it is unreadable as a record). */
export async function readTrust(root: string, path: string): Promise<TrustRecord | undefined> {
  const text = await readTextIfExists(await recordPath(root, path));
  const rec = text === undefined ? undefined : parseRecord(text);
  return rec?.path === path ? rec : undefined;
}

/** Whether the content with hash `sha256` at `path` is trusted. */
export async function trustStatus(
  root: string,
  path: string,
  sha256: string,
): Promise<TrustStatus> {
  const rec = await readTrust(root, path);
  if (rec === undefined) return "untrusted";
  return rec.sha256 === sha256 ? "trusted" : "changed";
}

/** Trust the content with hash `sha256` at `path` (replacing an earlier record of that path). */
export async function recordTrust(
  root: string,
  path: string,
  sha256: string,
  now: Date = new Date(),
): Promise<TrustRecord> {
  const rec: TrustRecord = { path, sha256, trusted_at: now.toISOString() };
  await mkdirPrivate(trustDir(root));
  await writeFileAtomic(await recordPath(root, path), JSON.stringify(rec, null, 2) + "\n", 0o600);
  return rec;
}

/** Forget the trust of `path`; false when it was not trusted. */
export async function revokeTrust(root: string, path: string): Promise<boolean> {
  const file = await recordPath(root, path);
  if ((await readTrust(root, path)) === undefined) return false;
  try {
    await Deno.remove(file);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw fsFailure(err, "remove", file) ?? err;
  }
}

/** Every trust record, by path. Files that are not records are skipped. */
export async function listTrust(root: string): Promise<TrustRecord[]> {
  const out: TrustRecord[] = [];
  try {
    for await (const e of Deno.readDir(trustDir(root))) {
      if (!e.isFile || !e.name.endsWith(".json")) continue;
      const text = await readTextIfExists(join(trustDir(root), e.name));
      const rec = text === undefined ? undefined : parseRecord(text);
      if (rec !== undefined && e.name === `${await sha256Hex(rec.path)}.json`) out.push(rec);
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return out;
    throw fsFailure(err, "read", trustDir(root)) ?? err;
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}
