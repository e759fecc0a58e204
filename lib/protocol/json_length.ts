/**
 * The length of `JSON.stringify(value)` without building it. The opaque
 * payloads of a response (a signature, encrypted reasoning) are counted by
 * their JSON's length against the bounds of a response and of a context;
 * stringifying a 15 MB signature to count it made 15 MB of garbage each time
 * (twice per response: the response's bound, the context's size), which V8
 * frees only in a full collection (attack round 24 bounded R10).
 *
 * Exactly `JSON.stringify(value)?.length` for JSON data (strings, finite
 * numbers, booleans, null, arrays and plain objects of them); a value JSON
 * leaves out (undefined, a function) counts as it would there (0 at the top,
 * `null` in an array, left out in an object). Not for objects with `toJSON`
 * or cycles (not what a parsed payload holds).
 *
 * @module
 */

/** The length of `JSON.stringify(value)` (0 where it gives undefined). */
export function jsonLength(value: unknown): number {
  return lengthOf(value) ?? 0;
}

/** The length of the JSON of `value`, undefined where JSON leaves it out. */
function lengthOf(value: unknown): number | undefined {
  switch (typeof value) {
    case "string":
      return stringLength(value);
    case "number":
      return Number.isFinite(value) ? String(value).length : 4; // null
    case "boolean":
      return value ? 4 : 5;
    case "bigint":
      throw new TypeError("Do not know how to serialize a BigInt");
    case "object": {
      if (value === null) return 4;
      if (Array.isArray(value)) {
        let n = 2 + Math.max(0, value.length - 1); // brackets, commas
        for (const v of value) n += lengthOf(v) ?? 4; // left out in an array: null
        return n;
      }
      let n = 2; // braces
      let members = 0;
      for (const [k, v] of Object.entries(value)) {
        const len = lengthOf(v);
        if (len === undefined) continue;
        n += stringLength(k) + 1 + len; // key, colon, value
        members++;
      }
      return n + Math.max(0, members - 1); // commas
    }
    default:
      return undefined; // undefined, a function, a symbol
  }
}

/** The length of `JSON.stringify(s)` for a string `s`. */
function stringLength(s: string): number {
  let n = s.length + 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c && (c < 0xd800 || c > 0xdfff)) continue;
    if (
      c === 0x22 || c === 0x5c || c === 0x08 || c === 0x0c || c === 0x0a || c === 0x0d || c === 0x09
    ) {
      n += 1; // \" \\ \b \f \n \r \t
    } else if (c < 0x20) {
      n += 5; // \u00XX
    } else if (c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++; // a pair: as it is
      else n += 5; // a lone high surrogate: \udXXX
    } else {
      n += 5; // a lone surrogate
    }
  }
  return n;
}
