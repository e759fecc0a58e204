/**
 * Streaming masking of tool-call argument text on its decoded strings. The
 * arguments stream as fragments of JSON text; a string in them may spell a
 * secret with `\uXXXX` (or other) escapes, which a masker over the raw text
 * never sees, while the display decodes the JSON and would show the value.
 * This re-writer follows the JSON text fragment by fragment: text outside
 * strings passes unchanged; every string (keys too) is decoded, masked by
 * its own streaming masker (lib/tools/secret_mask.ts), and written back as
 * JSON string content (`"`, `\` and control characters escaped, everything
 * else literal). The result is JSON equivalent to the input when nothing
 * was masked. Text that is not JSON is treated by the same rule (a `"` opens
 * a string); the caller masks the raw result as text as well.
 *
 * @module
 */
import { createSecretMasker, type Secret } from "../tools/secret_mask.ts";

/** A streaming re-writer of one call's argument text. */
export interface JsonStringMasker {
  /** The next fragment; returns the text that is final (strings may hold some back). */
  push(text: string): string;
  /** The held-back rest at the end of the arguments; the re-writer is reset. */
  flush(): string;
}

/** What a one-character escape stands for. */
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

/** What ends a run of plain string content. */
const SPECIAL = /["\\]/g;

/** `s` as the content of a JSON string (no quotes around). */
function encode(s: string): string {
  return s === "" ? "" : JSON.stringify(s).slice(1, -1);
}

/** The character of a complete escape (`\n`, `\u0041`); itself when not a valid one. */
function decodeEscape(esc: string): string {
  if (esc[1] === "u") {
    const hex = esc.slice(2);
    return /^[0-9a-fA-F]{4}$/.test(hex) ? String.fromCharCode(parseInt(hex, 16)) : esc;
  }
  return SIMPLE_ESCAPES[esc[1]!] ?? esc;
}

/** Start a re-writer masking `secrets` inside the strings of streamed JSON text. */
export function createJsonStringMasker(secrets: readonly Secret[]): JsonStringMasker {
  const inner = createSecretMasker(secrets);
  let inString = false;
  /** An escape begun in an earlier fragment (`\`, `\u00`), or null. */
  let escape: string | null = null;

  return {
    push(text) {
      let out = "";
      let decoded = "";
      let i = 0;
      while (i < text.length) {
        if (!inString) {
          const q = text.indexOf('"', i);
          if (q < 0) {
            out += text.slice(i);
            break;
          }
          out += text.slice(i, q + 1);
          inString = true;
          i = q + 1;
          continue;
        }
        if (escape !== null) {
          escape += text[i++];
          if (escape[1] === "u" && escape.length < 6) continue;
          decoded += decodeEscape(escape);
          escape = null;
          continue;
        }
        SPECIAL.lastIndex = i;
        const special = SPECIAL.exec(text)?.index ?? -1;
        if (special < 0) {
          decoded += text.slice(i);
          break;
        }
        decoded += text.slice(i, special);
        i = special;
        if (text[i] === "\\") {
          escape = "\\";
          i++;
          continue;
        }
        // The closing quote: the string's masked text, whole.
        out += encode(inner.push(decoded) + inner.flush()) + '"';
        decoded = "";
        inString = false;
        i++;
      }
      if (inString && decoded !== "") out += encode(inner.push(decoded));
      return out;
    },
    flush() {
      const rest = inString ? encode(inner.push(escape ?? "") + inner.flush()) : "";
      inString = false;
      escape = null;
      return rest;
    },
  };
}
