/**
 * Text escaped many levels deep, for the masker's too-deep checks: a value as `%XX` or as JSON
 * `\u` escapes inside more JSON string levels, and a check that no reading of an output, down
 * through those levels, gives a piece of the value.
 *
 * @module
 */
import { assertNoPieceOf } from "./secrets.ts";

/** Each character of `s` as `%XX`. */
export function pct(s: string): string {
  return [...s].map((c) => "%" + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0"))
    .join("");
}

/** `s` as `\uXXXX` escapes, inside `levels - 1` more levels of JSON strings. */
export function json(s: string, levels: number): string {
  let t = [...s].map((c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0")).join("");
  for (let i = 1; i < levels; i++) t = JSON.stringify(t).slice(1, -1);
  return t;
}

/** One JSON string level read back (`\uXXXX`, `\\`, `\x`), a lone backslash at the end kept. */
function unjson(s: string): string {
  return s.replace(
    /\\(u[0-9a-fA-F]{4}|[^])/g,
    (_, e: string) => e.length === 5 ? String.fromCharCode(parseInt(e.slice(1), 16)) : e,
  );
}

function unpct(s: string): string {
  return s.replace(/%([0-9a-fA-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
}

/** Fail when any reading of `out`, up to twelve levels of JSON and URL decoding, gives a piece of `value`. */
export function assertNoReadingLeaks(out: string, value: string, where: string): void {
  let level = new Set([out]);
  for (let i = 0; i <= 12 && level.size > 0; i++) {
    const next = new Set<string>();
    for (const t of level) {
      assertNoPieceOf(t, [value], `${where}, ${i} levels decoded`);
      for (const d of [unjson(t), unpct(t)]) if (d !== t) next.add(d);
    }
    level = next;
  }
}
