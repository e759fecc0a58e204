/**
 * Making untrusted text safe for a terminal. Model text, thinking, tool
 * arguments and tool output are written by a hostile party: raw, an escape
 * sequence in them could retitle the window, write the clipboard (OSC 52),
 * clear the screen, move the cursor over what penguin printed, or hide text.
 * Everything penguin shows from a trace or a live stream goes through here;
 * penguin's own colours and cursor moves are added afterwards.
 *
 * Two treatments:
 * - {@linkcode safeText} (and its streaming form
 *   {@linkcode createSafeTextStream}) for text that is read: complete escape
 *   sequences (CSI, OSC, DCS, SOS, PM, APC, two-byte ESC sequences, in
 *   their 7-bit and C1 forms) are removed; `\r\n` becomes `\n` and a lone
 *   `\r` (which would overwrite the line) becomes `\n`; every other control
 *   character but newline and tab, and the bidirectional overrides, become
 *   visible as `\xNN` / `\uNNNN`; the other invisible characters (Unicode
 *   default-ignorable code points and format characters: zero-width spaces
 *   and joiners, bidi marks, soft hyphen, variation selectors, tag
 *   characters…, see lib/display/invisible.ts) are removed, so text a
 *   terminal would join across them is joined here too. A string sequence (OSC…) longer than
 *   {@linkcode MAX_STRING_SEQUENCE} or left unterminated is shown, not
 *   dropped, so an opener cannot swallow the rest of the output.
 * - {@linkcode escapeControls} for text that is judged, such as the command
 *   of a tool call shown for approval: nothing is removed, every control
 *   character and every invisible character is shown as `\xNN` /
 *   `\uNNNN` / `\u{NNNNN}`.
 *
 * @module
 */

/** Longest OSC/DCS/SOS/PM/APC payload removed silently; longer ones are shown. */
export const MAX_STRING_SEQUENCE = 4096;

import { invisibleLength, splitTrailingSurrogate } from "./invisible.ts";

const ESC = 0x1b;
const BEL = 0x07;

/** `\xNN` for code points below 0x100, `\uNNNN` below 0x10000, else `\u{NNNNN}`. */
function visible(code: number): string {
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, "0")}`;
  if (code < 0x10000) return `\\u${code.toString(16).padStart(4, "0")}`;
  return `\\u{${code.toString(16)}}`;
}

/** Bidirectional embeddings, overrides and isolates: they reorder what the terminal shows. */
function isBidiControl(code: number): boolean {
  return (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
}

/** A control character other than newline and tab (C0, DEL, C1), or a bidi control. */
function isControl(code: number): boolean {
  return (code < 0x20 && code !== 0x0a && code !== 0x09) ||
    (code >= 0x7f && code <= 0x9f) || isBidiControl(code);
}

/**
 * Text with every control character (newline and tab included) and every
 * invisible character shown as `\xNN` / `\uNNNN` / `\u{NNNNN}`.
 */
export function escapeControls(text: string): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const hidden = c < 0x20 || (c >= 0x7f && c <= 0x9f) || isBidiControl(c)
      ? 1
      : invisibleLength(text, i);
    if (hidden > 0) {
      out += text.slice(from, i) + visible(text.codePointAt(i)!);
      from = i + hidden;
      i = from - 1;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

/** The streaming form of {@linkcode safeText}: sequences may span chunks. */
export interface SafeTextStream {
  /** Sanitize the next chunk; a sequence cut at its end is completed by the next one. */
  push(chunk: string): string;
  /** The end of the text: shows whatever an unfinished sequence held back. */
  end(): string;
}

type State =
  | "ground"
  /** After ESC. */
  | "esc"
  /** After ESC and intermediate bytes (0x20–0x2f). */
  | "esc_inter"
  /** Inside a control sequence (CSI). */
  | "csi"
  /** Inside a string sequence (OSC, DCS, SOS, PM, APC). */
  | "str"
  /** Inside a string sequence, after ESC (a possible ST). */
  | "str_esc";

/** A {@linkcode SafeTextStream}. */
export function createSafeTextStream(): SafeTextStream {
  // Long by design: a state machine over escape sequences; the states and their
  // transitions stay in one place so a reader sees every path a byte can take.
  let state: State = "ground";
  let afterCr = false;
  /** The opener and payload of the string sequence being read (shown if it never ends). */
  let held = "";
  /** A high surrogate that ended the last chunk: read with the next one. */
  let carry = "";

  /** Show a string sequence that did not end well; its payload is ordinary text. */
  const release = (): string => {
    const text = held;
    held = "";
    state = "ground";
    return visible(ESC) + escapeControls(text.slice(1));
  };

  function push(input: string): string {
    const [chunk, rest] = splitTrailingSurrogate(carry + input);
    carry = rest;
    return feed(chunk);
  }

  function feed(chunk: string): string {
    // Long because: one state machine over escape sequences; the states and their transitions read
    // best in one switch.
    let out = "";
    let i = 0;
    while (i < chunk.length) {
      const c = chunk.charCodeAt(i);
      switch (state) {
        case "ground": {
          if (afterCr) {
            afterCr = false;
            if (c === 0x0a) {
              i++;
              continue; // \r\n: the \n was written for the \r
            }
          }
          if (!isControl(c)) {
            const hidden = invisibleLength(chunk, i);
            if (hidden > 0) {
              i += hidden; // drawn as nothing: removed
              continue;
            }
            // Copy the run of ordinary characters at once.
            let j = i + 1;
            while (
              j < chunk.length && !isControl(chunk.charCodeAt(j)) && invisibleLength(chunk, j) === 0
            ) j++;
            out += chunk.slice(i, j);
            i = j;
            continue;
          }
          if (c === 0x0d) {
            out += "\n";
            afterCr = true;
          } else if (c === ESC) state = "esc";
          else if (c === 0x9b) state = "csi";
          else if (c === 0x9d || c === 0x90 || c === 0x98 || c === 0x9e || c === 0x9f) {
            state = "str";
            held = String.fromCharCode(ESC, c === 0x9d ? 0x5d : 0x50);
          } else out += visible(c);
          i++;
          continue;
        }
        case "esc": {
          if (c === 0x5b) state = "csi";
          else if (c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f) {
            state = "str";
            held = String.fromCharCode(ESC, c);
          } else if (c >= 0x20 && c <= 0x2f) state = "esc_inter";
          else if (c >= 0x30 && c <= 0x7e) state = "ground"; // ESC 7, ESC c, ESC M…: dropped
          else {
            out += visible(ESC); // not a sequence: show the ESC, then read `c` afresh
            state = "ground";
            continue;
          }
          i++;
          continue;
        }
        case "esc_inter": {
          if (c >= 0x20 && c <= 0x2f) {
            i++;
            continue;
          }
          state = "ground";
          if (c >= 0x30 && c <= 0x7e) i++; // the final byte: sequence dropped
          continue;
        }
        case "csi": {
          if (c >= 0x20 && c <= 0x3f) {
            i++;
            continue;
          }
          state = "ground";
          if (c >= 0x40 && c <= 0x7e) i++; // the final byte: sequence dropped
          continue; // anything else cancels the sequence and is read afresh
        }
        case "str": {
          if (c === BEL || c === 0x9c) {
            held = "";
            state = "ground";
            i++;
            continue;
          }
          if (c === ESC) {
            state = "str_esc";
            i++;
            continue;
          }
          if (c < 0x20 || isControl(c)) {
            out += release(); // a control character (a newline too) cancels it: read it afresh
            continue;
          }
          held += chunk[i];
          i++;
          if (held.length > MAX_STRING_SEQUENCE) out += release();
          continue;
        }
        case "str_esc": {
          if (c === 0x5c) {
            held = "";
            state = "ground";
            i++;
            continue;
          }
          out += release();
          state = "esc"; // that ESC starts something new
          continue;
        }
      }
    }
    return out;
  }

  function end(): string {
    let out = feed(carry); // a lone high surrogate: nothing followed it
    carry = "";
    if (state === "esc" || state === "esc_inter") out += visible(ESC);
    else if (state === "str") out += release();
    else if (state === "str_esc") out += release() + visible(ESC);
    state = "ground";
    held = "";
    afterCr = false;
    return out;
  }

  return { push, end };
}

/**
 * Make untrusted text safe for a terminal: escape sequences removed, `\r`
 * turned into a line break, other control characters (except newline and
 * tab) and bidi overrides shown as `\xNN` / `\uNNNN`. See the module doc.
 */
export function safeText(text: string): string {
  const s = createSafeTextStream();
  return s.push(text) + s.end();
}

/**
 * `value` with every string in it (object keys too, at any depth) passed
 * through {@linkcode safeText}: for a report built from untrusted records
 * (a trace, an imported session) that a renderer then styles with penguin's
 * own escape sequences.
 */
export function safeStrings<T>(value: T): T {
  if (typeof value === "string") return safeText(value) as T;
  if (Array.isArray(value)) return value.map((v) => safeStrings(v)) as T;
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[safeText(k)] = safeStrings(v);
    return out as T;
  }
  return value;
}
