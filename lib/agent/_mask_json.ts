/**
 * Masking of JSON text by its values: the text is parsed, every string in it
 * (keys too) masked, and the result serialized again, so a secret holding
 * `"`, `\` or a control character is found as it reads once decoded, not
 * through its escapes. A tool call's `arguments` is such a text, in what
 * the model writes, in a resumed history and in an imported trace.
 * Arguments that are not JSON are masked as text.
 *
 * @module
 */

/** Every string of a JSON value (keys included) masked; `changed` tells whether any was. */
export function maskJson(
  value: unknown,
  mask: (s: string) => string,
): { value: unknown; changed: boolean } {
  if (typeof value === "string") {
    const masked = mask(value);
    return { value: masked, changed: masked !== value };
  }
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v) => {
      const r = maskJson(v, mask);
      changed ||= r.changed;
      return r.value;
    });
    return { value: out, changed };
  }
  if (value !== null && typeof value === "object") {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const key = mask(k);
      const r = maskJson(v, mask);
      changed ||= r.changed || key !== k;
      out[key] = r.value;
    }
    return { value: out, changed };
  }
  return { value, changed: false };
}

/** A JSON number literal, matched where it starts. */
const JSON_NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * JSON text with every number literal whose decimal text holds a secret
 * replaced by its masked text as a JSON string (`"n": 7301…` becomes
 * `"n": "[redacted:…]"`). Done on the text: parsing first would round a long
 * number and hide the secret from the masker. Strings are skipped by a scan,
 * not a regular expression: one whose alternation backtracked per character
 * overflowed the stack on a string of 10 MB, and `trace show` stopped with
 * an internal error (attack round 25 bounded C8).
 */
function maskJsonNumbers(json: string, mask: (s: string) => string): string {
  const pieces: string[] = [];
  let last = 0;
  let i = 0;
  while (i < json.length) {
    const c = json.charCodeAt(i);
    if (c === 0x22) {
      // A string: to its closing quote, escapes skipped.
      for (i++; i < json.length; i++) {
        const d = json.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
      i++;
      continue;
    }
    if (c !== 0x2d && (c < 0x30 || c > 0x39)) {
      i++;
      continue;
    }
    JSON_NUMBER.lastIndex = i;
    const m = JSON_NUMBER.exec(json);
    if (m === null) {
      i++;
      continue;
    }
    const number = m[0];
    const masked = mask(number);
    if (masked !== number) {
      pieces.push(json.slice(last, i), JSON.stringify(masked));
      last = i + number.length;
    }
    i += number.length;
  }
  if (last === 0) return json;
  pieces.push(json.slice(last));
  return pieces.join("");
}

/** Tool-call arguments with the secrets masked inside their JSON strings and numbers (as text when not JSON). */
export function maskArguments(args: string, mask: (s: string) => string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return mask(args);
  }
  const numbers = maskJsonNumbers(args, mask);
  if (numbers !== args) parsed = JSON.parse(numbers);
  const r = maskJson(parsed, mask);
  if (r.changed) return JSON.stringify(r.value);
  return numbers !== args ? JSON.stringify(parsed) : args;
}

/**
 * Whether a number in `value` (at any depth) spells a secret as its decimal digits: a digits-only
 * vault value the model learned came back as a number of an opaque payload, which masking, made
 * for strings, never looked at (attack round 23 secrets B4). Such a payload is dropped.
 */
export function holdsSecretNumber(value: unknown, mask: (s: string) => string): boolean {
  if (typeof value === "number") {
    const text = String(value);
    return mask(text) !== text;
  }
  if (Array.isArray(value)) return value.some((v) => holdsSecretNumber(v, mask));
  if (value !== null && typeof value === "object") {
    return Object.values(value).some((v) => holdsSecretNumber(v, mask));
  }
  return false;
}
