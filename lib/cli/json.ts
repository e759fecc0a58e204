/**
 * JSON for the terminal: every `--json` output uses snake_case keys, like the
 * trace records. Library results use camelCase field names; they are renamed
 * here, at the edge, so callers of the library keep their TypeScript shapes.
 *
 * @module
 */
import type { Io } from "./command.ts";

/** `sessionId` -> `session_id`, `latestPath` -> `latest_path`; snake_case keys stay as they are. */
export function snakeKey(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, "$1_$2").replace(/([A-Z])([A-Z][a-z])/g, "$1_$2")
    .toLowerCase();
}

/**
 * A deep copy of `value` with every object key in snake_case, except below
 * the keys in `verbatim`, whose values are copied untouched (data whose keys
 * are not penguin's: a session_meta as recorded, a vault's variable names).
 */
export function snakeKeys(value: unknown, verbatim: ReadonlySet<string> = new Set()): unknown {
  if (Array.isArray(value)) return value.map((v) => snakeKeys(v, verbatim));
  if (value === null || typeof value !== "object") return value;
  const toJSON = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof toJSON === "function") return snakeKeys(toJSON.call(value), verbatim);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    out[snakeKey(k)] = verbatim.has(k) ? v : snakeKeys(v, verbatim);
  }
  return out;
}

/** Print `value` as indented JSON with snake_case keys (see {@linkcode snakeKeys}). */
export function printJson(
  io: Io,
  value: unknown,
  verbatim: ReadonlySet<string> = new Set(),
): void {
  io.out(JSON.stringify(snakeKeys(value, verbatim), null, 2) + "\n");
}
