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

/** What a {@linkcode SafeTextStream} remembers between chunks. */
interface SanitizerState {
  state: State;
  afterCr: boolean;
  /** The opener and payload of the string sequence being read (shown if it never ends). */
  held: string;
  /** A high surrogate that ended the last chunk: read with the next one. */
  carry: string;
}

/** The chunk being read: where, and what has been written for it so far. */
interface Scan {
  chunk: string;
  i: number;
  out: string;
}

/** Show a string sequence that did not end well; its payload is ordinary text. */
function release(st: SanitizerState): string {
  const text = st.held;
  st.held = "";
  st.state = "ground";
  return visible(ESC) + escapeControls(text.slice(1));
}

/** Ground state: ordinary text copied, `\r` made a line break, sequences opened. */
function groundStep(st: SanitizerState, sc: Scan, c: number): void {
  const chunk = sc.chunk;
  if (st.afterCr) {
    st.afterCr = false;
    if (c === 0x0a) {
      sc.i++;
      return; // \r\n: the \n was written for the \r
    }
  }
  if (!isControl(c)) {
    const hidden = invisibleLength(chunk, sc.i);
    if (hidden > 0) {
      sc.i += hidden; // drawn as nothing: removed
      return;
    }
    // Copy the run of ordinary characters at once.
    let j = sc.i + 1;
    while (
      j < chunk.length && !isControl(chunk.charCodeAt(j)) && invisibleLength(chunk, j) === 0
    ) j++;
    sc.out += chunk.slice(sc.i, j);
    sc.i = j;
    return;
  }
  if (c === 0x0d) {
    sc.out += "\n";
    st.afterCr = true;
  } else if (c === ESC) st.state = "esc";
  else if (c === 0x9b) st.state = "csi";
  else if (c === 0x9d || c === 0x90 || c === 0x98 || c === 0x9e || c === 0x9f) {
    st.state = "str";
    st.held = String.fromCharCode(ESC, c === 0x9d ? 0x5d : 0x50);
  } else sc.out += visible(c);
  sc.i++;
}

/** After ESC: which sequence it opens, if any. */
function escStep(st: SanitizerState, sc: Scan, c: number): void {
  if (c === 0x5b) st.state = "csi";
  else if (c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f) {
    st.state = "str";
    st.held = String.fromCharCode(ESC, c);
  } else if (c >= 0x20 && c <= 0x2f) st.state = "esc_inter";
  else if (c >= 0x30 && c <= 0x7e) st.state = "ground"; // ESC 7, ESC c, ESC M…: dropped
  else {
    sc.out += visible(ESC); // not a sequence: show the ESC, then read `c` afresh
    st.state = "ground";
    return;
  }
  sc.i++;
}

/** After ESC and intermediate bytes: more of them, or the final byte. */
function escInterStep(st: SanitizerState, sc: Scan, c: number): void {
  if (c >= 0x20 && c <= 0x2f) {
    sc.i++;
    return;
  }
  st.state = "ground";
  if (c >= 0x30 && c <= 0x7e) sc.i++; // the final byte: sequence dropped
}

/** Inside a control sequence (CSI): parameters, or the final byte. */
function csiStep(st: SanitizerState, sc: Scan, c: number): void {
  if (c >= 0x20 && c <= 0x3f) {
    sc.i++;
    return;
  }
  st.state = "ground";
  if (c >= 0x40 && c <= 0x7e) sc.i++; // the final byte: sequence dropped
  // anything else cancels the sequence and is read afresh
}

/** Inside a string sequence: its terminator, or its payload held back. */
function strStep(st: SanitizerState, sc: Scan, c: number): void {
  if (c === BEL || c === 0x9c) {
    st.held = "";
    st.state = "ground";
    sc.i++;
    return;
  }
  if (c === ESC) {
    st.state = "str_esc";
    sc.i++;
    return;
  }
  if (c < 0x20 || isControl(c)) {
    sc.out += release(st); // a control character (a newline too) cancels it: read it afresh
    return;
  }
  st.held += sc.chunk[sc.i];
  sc.i++;
  if (st.held.length > MAX_STRING_SEQUENCE) sc.out += release(st);
}

/** Inside a string sequence after ESC: the ST that ends it, or something new. */
function strEscStep(st: SanitizerState, sc: Scan, c: number): void {
  if (c === 0x5c) {
    st.held = "";
    st.state = "ground";
    sc.i++;
    return;
  }
  sc.out += release(st);
  st.state = "esc"; // that ESC starts something new
}

/** Run the state machine over `chunk`; one step per state, each reading from `sc.i`. */
function feed(st: SanitizerState, chunk: string): string {
  const sc: Scan = { chunk, i: 0, out: "" };
  while (sc.i < chunk.length) {
    const c = chunk.charCodeAt(sc.i);
    switch (st.state) {
      case "ground":
        groundStep(st, sc, c);
        break;
      case "esc":
        escStep(st, sc, c);
        break;
      case "esc_inter":
        escInterStep(st, sc, c);
        break;
      case "csi":
        csiStep(st, sc, c);
        break;
      case "str":
        strStep(st, sc, c);
        break;
      case "str_esc":
        strEscStep(st, sc, c);
        break;
    }
  }
  return sc.out;
}

/** The end of the text: whatever an unfinished sequence held back, shown. */
function endStream(st: SanitizerState): string {
  let out = feed(st, st.carry); // a lone high surrogate: nothing followed it
  st.carry = "";
  if (st.state === "esc" || st.state === "esc_inter") out += visible(ESC);
  else if (st.state === "str") out += release(st);
  else if (st.state === "str_esc") out += release(st) + visible(ESC);
  st.state = "ground";
  st.held = "";
  st.afterCr = false;
  return out;
}

/** A {@linkcode SafeTextStream}. */
export function createSafeTextStream(): SafeTextStream {
  const st: SanitizerState = { state: "ground", afterCr: false, held: "", carry: "" };
  return {
    push(input) {
      const [chunk, rest] = splitTrailingSurrogate(st.carry + input);
      st.carry = rest;
      return feed(st, chunk);
    },
    end: () => endStream(st),
  };
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
