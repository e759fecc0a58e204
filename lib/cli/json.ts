/**
 * JSON for the terminal: every `--json` output uses snake_case keys, like the
 * trace records. Library results use camelCase field names; they are renamed
 * here, at the edge, so callers of the library keep their TypeScript shapes.
 *
 * `JSON.stringify` escapes only the C0 controls: DEL and the C1 controls
 * (U+0080–U+009F: U+009B is CSI and U+009D OSC in terminals that read UTF-8
 * C1, so an OSC 52 clipboard write can hide in a string) pass raw. Every
 * write to a terminal goes through {@linkcode escapeC1} (lib/cli/mod.ts's
 * `processIo`), which writes them as JSON's `\u009b` escapes: the JSON stays
 * the same JSON, and any other text shows them instead of obeying them.
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

/** Items of an array written in one part at most (see {@linkcode printJsonArray}). */
const PART_ITEMS = 500;

/**
 * Print `items` as {@linkcode printJson} would print the array, in parts
 * of a few hundred items: the text of 60,000 listing rows (some 60 MB) is
 * never held whole, nor the snake_case copy of every row at once.
 */
export function printJsonArray(
  io: Io,
  items: readonly unknown[],
  verbatim: ReadonlySet<string> = new Set(),
): void {
  if (items.length === 0) {
    io.out("[]\n");
    return;
  }
  let part = "[\n";
  for (let i = 0; i < items.length; i++) {
    // An item the array form writes as null (undefined, a function) is written so here too.
    const text = JSON.stringify(snakeKeys(items[i], verbatim), null, 2) ?? "null";
    part += `  ${text.replaceAll("\n", "\n  ")}${i + 1 < items.length ? "," : ""}\n`;
    if ((i + 1) % PART_ITEMS === 0) {
      io.out(part);
      part = "";
    }
  }
  io.out(`${part}]\n`);
}

/** DEL and the C1 controls, which `JSON.stringify` leaves raw. */
const C1 = /[\u007f-\u009f]/g;

/**
 * `text` with DEL and every C1 control written as a JSON `\uXXXX` escape (a
 * valid escape inside a JSON string, and plain visible text elsewhere).
 */
export function escapeC1(text: string): string {
  return text.replace(C1, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
