/**
 * Masking of known secret values in tool output. A session knows its secrets
 * exactly (the agent's vault values, the configured API keys and the `env` /
 * header values of its MCP servers), so every occurrence of one is replaced by
 * a marker before the text is recorded, rendered or sent to the model:
 *
 * - a vault value becomes `[redacted:vault:<KEY>]` (the vault key);
 * - an API key becomes `[redacted:api_key:<NAME>]`, where NAME is the env var
 *   it is read from (`OPENAI_API_KEY`) or, for a key stored inline in a model
 *   entry of `.project_config.toml` (or given with `--api-key`), the provider
 *   group of that entry (`openai`);
 * - an MCP server's value becomes `[redacted:mcp:<server>.<NAME>]`, NAME being
 *   the env var or the header name.
 *
 * Values shorter than {@linkcode MIN_SECRET_LENGTH} characters are not
 * masked: masking `1234` or `a` would destroy ordinary output and hide
 * nothing an attacker could not guess. A value of
 * {@linkcode FRAGMENT_SECRET_LENGTH} characters or more is also masked in
 * part: any run of at least {@linkcode FRAGMENT_LENGTH} consecutive characters
 * of it (a prefix, a suffix or a middle piece) is replaced by its marker, so a
 * command that prints a secret in pieces (`cut -c1-12`, `tail -c 16`) leaks
 * no piece long enough to matter. Shorter values are masked only whole.
 *
 * A text that holds a backslash is also matched as it decodes: JSON and
 * JavaScript string escapes in any encoder's spelling (`\u0026`, `\u003C`,
 * `\u00e4`, `\/`, every character as `\uXXXX`, surrogate pairs, `\xHH`, `\v`, octal, line
 * continuations, identity escapes), and as C and shell `$'…'` read escapes where that differs
 * (`\a`, `\e`, `\cX`) and as printf `%b` reads them where that differs (`\0NNN`; see
 * lib/tools/_escape_view.ts), up to {@linkcode ESCAPE_LEVELS} levels deep (JSON text, JSON text
 * held in a JSON string, and so on), by the same rule, each level in every reading where they
 * differ (any mix of readings; at most {@linkcode MAX_VIEWS_PER_LEVEL} distinct
 * views a level, past which the text's lines holding a backslash are masked whole);
 * each decoded view is read as a terminal shows it too (below), so
 * `Ab<C\u001b[1md&E/` (coloured text as a JSON encoder writes it) is one run. A match there masks the whole escapes
 * it comes from, never part of one, and never a plain `"` of the text (the
 * match is split around it), so masked JSON text still decodes.

 * URL percent-encoding and HTML character references are read like numeric escapes
 * (lib/tools/_web_escape.ts), a secret's hex and base64 forms are matched as literal text with its
 * marker (lib/tools/_encoded_forms.ts), and a text whose view {@linkcode ESCAPE_LEVELS} levels
 * down still decodes is masked line by line ({@linkcode ESCAPE_DEPTH_MARKER}).
 *
 * Matching runs on what a terminal shows: escape sequences (CSI, OSC, DCS
 * and the rest, 7-bit and C1, read as lib/display/terminal_text.ts reads
 * them), control characters (C0 but tab, newline and carriage return, DEL,
 * C1) and invisible characters (every Unicode default-ignorable code point
 * and format character: zero-width and bidi controls and marks, soft
 * hyphen, variation selectors, tag characters…, see
 * lib/display/invisible.ts) do not separate a secret's characters, so `abcde ESC[0m fghij` is one run. A match is replaced from
 * its first to its last character, the sequences between them included;
 * the contents of the sequences are masked as plain text too. A possible
 * match held behind more than {@linkcode MAX_HELD_CONTROLS} characters of
 * such sequences is decided then, as at the end of the output (a secret whose characters lie that
 * far apart is masked only in pieces of {@linkcode FRAGMENT_LENGTH} characters or more).
 *
 * The masker is streaming: a value split across chunks is still found, and
 * the text held back between chunks is only a tail that could still become
 * (or extend) a match: less than the longest secret form's length in shown characters
 * (plus the sequences among them). Matching is
 * leftmost first, then longest (a longer secret, or a longer run of one, wins
 * at the same position; on a tie the longer secret's marker, then the first
 * given); the concatenation of what `push` and `flush` return equals
 * {@linkcode maskSecrets} of the whole text.
 *
 * Fragments are found through a table of every {@linkcode FRAGMENT_LENGTH}-
 * character window of every long secret, keyed by a rolling hash: the text
 * is scanned once, a window whose hash is in the table is compared, and a
 * true window is extended as far as the secret and the text agree. The cost
 * is linear in the text, whatever the number of secrets.
 *
 * @module
 */

import { collectorEvery } from "../state/_gc.ts";
import { pairSafeSlices } from "../protocol/pair_safe_slices.ts";
import { HAS_INVISIBLE, invisibleLength, splitTrailingSurrogate } from "../display/invisible.ts";
import {
  type EscapeView,
  escapeView,
  spanEnd,
  spanEndAt,
  spanStartAt,
  unitAt,
} from "./_escape_view.ts";
import { createLattice, type Lattice } from "./_escape_lattice.ts";
import { encodedForms } from "./_encoded_forms.ts";
import { publicPrefixLength } from "./_public_prefix.ts";
import { mayHoldWebEscape, webView } from "./_web_escape.ts";

/**
 * Characters the masking has decoded (each escape reading of a text counts its length) and
 * scanned for secrets (each text or view searched counts its length), since the process began.
 * A test seam: tests bound the work of masking a text by these counts, not by time.
 */
export const maskWork: { decoded: number; scanned: number } = { decoded: 0, scanned: 0 };

/** Shortest value that is masked; shorter ones are left alone. */
export const MIN_SECRET_LENGTH = 6;

/** Shortest value whose pieces are masked too (shorter values only whole). */
export const FRAGMENT_SECRET_LENGTH = 12;

/** Shortest piece of a long value that is masked. */
export const FRAGMENT_LENGTH = 8;

/** Where a secret comes from. */
export type SecretKind = "vault" | "api_key" | "mcp";

/** One secret value and the name its marker shows. */
export interface Secret {
  /** `vault`, `api_key` or `mcp`. */
  kind: SecretKind;
  /** Vault key, env var name, provider group or `<server>.<name>` (never the value). */
  name: string;
  /** The value to hide. */
  value: string;
}

/** The marker that replaces a secret: `[redacted:<kind>:<name>]`. */
export function secretMarker(secret: Pick<Secret, "kind" | "name">): string {
  return `[redacted:${secret.kind}:${secret.name}]`;
}

/** Secrets of a vault, one per entry (key order). */
export function vaultSecrets(vault: Readonly<Record<string, string>> | undefined): Secret[] {
  if (!vault) return [];
  return Object.entries(vault).map(([name, value]) => ({ kind: "vault", name, value }));
}

/** A streaming masker over a fixed set of secrets. */
export interface SecretMasker {
  /** Mask the next chunk; returns the text that is final (possibly less than given). */
  push(text: string): string;
  /** The held-back rest, masked; the masker is reset for reuse. */
  flush(): string;
  /** Characters currently held back. */
  readonly held: number;
  /** False when there is nothing to mask (every call returns its input). */
  readonly active: boolean;
}

interface Entry {
  value: string;
  marker: string;
  /**
   * The fewest characters of it that are masked: the whole value for one matched only whole,
   * {@linkcode FRAGMENT_LENGTH} for a long secret, more for an encoded form (lib/tools/_encoded_forms.ts).
   */
  least: number;
  /**
   * Where in the value a masked piece ends at the earliest: past the secret's public prefix by
   * `least` (lib/tools/_public_prefix.ts), so that no piece made mostly of the public prefix
   * makes the masker an oracle for the next character. 0 for a value matched only whole.
   */
  reach: number;
  /** How many leading characters of the value are the secret's public prefix (0: none, or whole only). */
  prefix: number;
  /** Whether it is a secret's hex or base64 form rather than the secret. */
  encoded: boolean;
}

/** One window of a long secret: which secret, and where in it the window starts. */
interface Window {
  entry: Entry;
  offset: number;
}

/**
 * `value`'s UTF-8 bytes, one character each (U+0000–U+00FF), without the characters the matcher
 * does not see in text (controls, the soft hyphen); undefined for an ASCII value (its bytes are
 * its characters).
 */
function byteReading(value: string): string | undefined {
  // deno-lint-ignore no-control-regex
  if (!/[^\u0000-\u007f]/.test(value)) return undefined;
  let out = "";
  for (const b of new TextEncoder().encode(value)) {
    if (b < 0x20 || (b >= 0x7f && b <= 0x9f) || b === 0xad) continue;
    out += String.fromCharCode(b);
  }
  return out;
}

/** `value` and its other Unicode normal forms (NFC, NFD, NFKC, NFKD) long enough to mask. */
function normalForms(value: string): string[] {
  const out = [value];
  for (const form of ["NFC", "NFD", "NFKC", "NFKD"] as const) {
    const v = value.normalize(form);
    if (!out.includes(v) && v.length >= MIN_SECRET_LENGTH) out.push(v);
  }
  return out;
}

/**
 * The usable secrets (long enough, one per value: first wins), their byte readings
 * ({@linkcode byteReading}), then the hex and base64 forms of the secrets
 * (lib/tools/_encoded_forms.ts), longest first.
 */
function entriesOf(secrets: readonly Secret[]): Entry[] {
  const seen = new Set<string>();
  const out: Entry[] = [];
  const usable = secrets.filter((s) =>
    typeof s.value === "string" && s.value.length >= MIN_SECRET_LENGTH
  );
  for (const s of usable) {
    // Its Unicode normal forms too: a value given decomposed (NFD) and printed composed (NFC), or
    // the other way, is the same text to a reader (attack round 31 s01b).
    // Pieces by the value as given: another form's code units are not its characters (a
    // 10-character key is 12 units decomposed, and was masked in pieces: round 32 v04), so a
    // piece of another form counts from twice as long, as the byte readings do.
    const pieces = s.value.length >= FRAGMENT_SECRET_LENGTH;
    for (const value of normalForms(s.value)) {
      if (seen.has(value)) continue;
      seen.add(value);
      const least = !pieces
        ? value.length
        : value === s.value
        ? FRAGMENT_LENGTH
        : Math.min(2 * FRAGMENT_LENGTH, value.length);
      const prefix = pieces ? publicPrefixLength(value, least, s.kind) : 0;
      const reach = pieces ? prefix + least : 0;
      out.push({ value, marker: secretMarker(s), least, reach, prefix, encoded: false });
    }
  }
  for (const e of [...out]) {
    // A non-ASCII secret's UTF-8 bytes read one character a byte: what its bytes escaped one by
    // one decode to (`%C3%BC`, `\xc3\xbc`, `\303\274`, `&#xC3;&#xBC;`), and what text decoded as
    // Latin-1 shows; matched as the secret is, through every escape reading.
    const bytes = byteReading(e.value);
    if (bytes !== undefined && !seen.has(bytes) && bytes.length >= MIN_SECRET_LENGTH) {
      seen.add(bytes);
      // A piece of it counts as a piece of the secret from twice as long: 16 bytes hold at least
      // 5 characters (8 characters of the secret may be as few bytes as 8, and `M%C3%BCnchen` in a
      // URL is no secret).
      const least = e.least < e.value.length
        ? Math.min(2 * FRAGMENT_LENGTH, bytes.length)
        : bytes.length;
      // The prefix's own bytes, as the reading keeps them.
      const prefix = e.prefix === 0 ? 0 : byteReading(e.value.slice(0, e.prefix))?.length ??
        e.prefix;
      const reach = e.reach === 0 ? 0 : Math.min(prefix + least, bytes.length);
      out.push({ value: bytes, marker: e.marker, least, reach, prefix, encoded: false });
    }
  }
  for (const e of [...out]) {
    for (const form of encodedForms(e.value, e.least < e.value.length, e.prefix)) {
      if (seen.has(form.value)) continue;
      seen.add(form.value);
      const { value, least, reach } = form;
      out.push({ value, marker: e.marker, least, reach, prefix: 0, encoded: true });
    }
  }
  // Stable: equal lengths keep the order given.
  return out.sort((a, b) => b.value.length - a.value.length);
}

const HASH_BASE = 0x01000193;
/** HASH_BASE ** (FRAGMENT_LENGTH - 1), modulo 2^32: the weight of a window's first character. */
const HASH_LEAD = (() => {
  let m = 1;
  for (let i = 1; i < FRAGMENT_LENGTH; i++) m = Math.imul(m, HASH_BASE);
  return m;
})();

/** Hash of the FRAGMENT_LENGTH characters of `s` from `at`. */
function windowHash(s: string, at: number): number {
  let h = 0;
  for (let i = 0; i < FRAGMENT_LENGTH; i++) {
    h = (Math.imul(h, HASH_BASE) + s.charCodeAt(at + i)) | 0;
  }
  return h;
}

/** The window table of the long entries, and a 16-bit filter of its hashes. */
function windowsOf(
  entries: readonly Entry[],
): { table: Map<number, Window[]>; filter: Uint8Array } {
  const table = new Map<number, Window[]>();
  const filter = new Uint8Array(0x10000);
  for (const entry of entries) {
    for (let offset = 0; offset + FRAGMENT_LENGTH <= entry.value.length; offset++) {
      const h = windowHash(entry.value, offset);
      const list = table.get(h);
      if (list) list.push({ entry, offset });
      else table.set(h, [{ entry, offset }]);
      filter[h & 0xffff] = 1;
    }
  }
  return { table, filter };
}

/** What starts at a position: a decided match, nothing, or not yet known. */
type Found = { entry: Entry; length: number } | "none" | "undecided";

/** The matching of a set of secrets, shared by the maskers. */
interface Matcher {
  /** The usable secrets, longest first. */
  entries: readonly Entry[];
  /** The fewest characters a match takes: a shorter text holds none. */
  shortest: number;
  /**
   * Decided matches from the start of `text`, and the first undecided position; `closed` when
   * the scan failed closed (lines masked whole: too deep, or too many readings).
   */
  scan(text: string, final: boolean): { hits: Hit[]; stop: number; closed?: boolean };
}

/** The secrets matched whole, by their first code unit, and a filter of those units. */
function shortIndexOf(
  short: readonly Entry[],
): { shortByFirst: Map<number, Entry[]>; shortStart: Uint8Array } {
  const shortByFirst = new Map<number, Entry[]>();
  /** 1 at the code unit a short secret starts with. */
  const shortStart = new Uint8Array(0x10000);
  for (const e of short) {
    const c = e.value.charCodeAt(0);
    shortStart[c] = 1;
    const list = shortByFirst.get(c);
    if (list) list.push(e);
    else shortByFirst.set(c, [e]);
  }
  return { shortByFirst, shortStart };
}

function createMatcher(secrets: readonly Secret[]): Matcher {
  // Long because: the scan (a rolling hash over the text) and its per-position decision share the
  // window table and the short secrets' index.
  const entries = entriesOf(secrets);
  // Long: found through the window table (pieces of a secret, encoded forms); short: secrets
  // matched only whole, by their first character.
  const long = entries.filter((e) => e.encoded || e.least < e.value.length);
  const short = entries.filter((e) => !e.encoded && e.least === e.value.length);
  const { table, filter } = windowsOf(long);
  const { shortByFirst, shortStart } = shortIndexOf(short);
  const shortest = Math.min(
    ...long.map((e) => e.least),
    ...short.map((e) => e.value.length),
  );
  const NO_WINDOWS: readonly Window[] = [];
  const NO_ENTRIES: readonly Entry[] = [];

  /**
   * What starts at `p` of `text`, whose window hash is `h` (when a whole
   * window fits). Not final: a match that reaches the end of the text, or a
   * tail that could still begin one, is undecided.
   */
  const foundAt = (text: string, p: number, h: number, final: boolean): Found => {
    const rest = text.length - p;
    let bestEntry: Entry | undefined;
    let bestLength = 0;
    let undecided = false;
    if (rest >= FRAGMENT_LENGTH) {
      if (filter[h & 0xffff] === 1) {
        for (const w of table.get(h) ?? NO_WINDOWS) {
          const v = w.entry.value;
          let k = 0;
          while (k < FRAGMENT_LENGTH && text.charCodeAt(p + k) === v.charCodeAt(w.offset + k)) k++;
          if (k < FRAGMENT_LENGTH) continue; // a hash collision
          while (p + k < text.length && w.offset + k < v.length) {
            if (text.charCodeAt(p + k) !== v.charCodeAt(w.offset + k)) break;
            k++;
          }
          // Ran out of text while the secret goes on: more text may make it longer.
          if (!final && p + k === text.length && w.offset + k < v.length) undecided = true;
          if (k < w.entry.least) continue; // too short a piece of this one
          if (w.offset + k < w.entry.reach) continue; // mostly the public prefix
          if (k > bestLength) {
            bestEntry = w.entry;
            bestLength = k;
          }
        }
      }
    } else if (!final && long.length > 0) {
      // Too short for a window: undecided when it could be the start of one.
      const tail = text.slice(p);
      for (const e of long) {
        const i = e.value.indexOf(tail);
        if (i >= 0 && i + FRAGMENT_LENGTH <= e.value.length) {
          undecided = true;
          break;
        }
      }
    }
    for (const e of shortByFirst.get(text.charCodeAt(p)) ?? NO_ENTRIES) {
      if (text.startsWith(e.value, p)) {
        if (e.value.length > bestLength) {
          bestEntry = e;
          bestLength = e.value.length;
        }
      } else if (!final && rest < e.value.length && e.value.startsWith(text.slice(p))) {
        undecided = true;
      }
    }
    if (undecided) return "undecided";
    return bestEntry === undefined ? "none" : { entry: bestEntry, length: bestLength };
  };

  /**
   * The decided matches of `text` (the view) from its start, and where the
   * first undecided position is (`text.length`: none). Not final: a tail
   * that could still begin or extend a match stays undecided.
   */
  const scanRaw = (text: string, final: boolean): { hits: Hit[]; stop: number } => {
    maskWork.scanned += text.length;
    const hits: Hit[] = [];
    let p = 0;
    let h = text.length >= FRAGMENT_LENGTH ? windowHash(text, 0) : 0;
    const n = text.length;
    while (p < n) {
      if (p + FRAGMENT_LENGTH < n) {
        // The common case, without a call: no window hashes to `h` and no short secret starts here.
        if (filter[h & 0xffff] === 0 && shortStart[text.charCodeAt(p)] === 0) {
          h = (Math.imul(h - Math.imul(text.charCodeAt(p), HASH_LEAD), HASH_BASE) +
            text.charCodeAt(p + FRAGMENT_LENGTH)) | 0;
          p++;
          continue;
        }
      }
      const found = foundAt(text, p, h, final);
      if (found === "undecided") return { hits, stop: p };
      if (found !== "none") {
        hits.push({ at: p, length: found.length, marker: found.entry.marker });
        p += found.length;
        if (p + FRAGMENT_LENGTH <= text.length) h = windowHash(text, p);
        continue;
      }
      if (p + FRAGMENT_LENGTH < text.length) {
        h = (Math.imul(h - Math.imul(text.charCodeAt(p), HASH_LEAD), HASH_BASE) +
          text.charCodeAt(p + FRAGMENT_LENGTH)) | 0;
      }
      p++;
    }
    return { hits, stop: text.length };
  };

  const lattice = createLattice(
    entries.filter((e) => !e.encoded).map((e) => ({ ...e, whole: e.least === e.value.length })),
    FRAGMENT_LENGTH,
  );
  const scan = (text: string, final: boolean) => scanAllReadings(scanRaw, lattice, text, final);
  return { entries, shortest, scan };
}

/**
 * How many levels of string escapes are decoded at most: JSON text, JSON text held in a JSON
 * string, and so on. A level is decoded only while the one before it decoded something and still
 * holds a backslash, so each costs one pass over a text no longer than the one before.
 */
export const ESCAPE_LEVELS = 8;

type Scan = (text: string, final: boolean) => { hits: Hit[]; stop: number };

/**
 * Distinct decoded views a scan reads at one level at most. Each level reads every view of the
 * level before in both readings where they differ, so any sequence of readings is covered; views
 * with the same text are read once (the two readings of ordinary text converge after a level).
 * A text that needs more is masked line by line (see {@linkcode ESCAPE_READINGS_MARKER}).
 */
export const MAX_VIEWS_PER_LEVEL = 16;

/**
 * What replaces each line that holds a backslash, when the escapes of the text scanned read more
 * than {@linkcode MAX_VIEWS_PER_LEVEL} different ways at one level: too many to check, so the
 * lines that could spell a secret are not shown (fail closed).
 */
export const ESCAPE_READINGS_MARKER = "[redacted:escapes:too_many_readings]";

/**
 * What replaces each line that holds an escape, when the view {@linkcode ESCAPE_LEVELS} levels
 * down still decodes (an escape there changes it): a secret may lie a level further down, so the
 * lines that could spell one are not shown (fail closed).
 */
export const ESCAPE_DEPTH_MARKER = "[redacted:escapes:too_deep]";

/** One scan's decoded views so far, by level and key: each is scanned once. */
interface ViewScans {
  scanRaw: Scan;
  /** Matches over every reading of the numeric escapes of a level (lib/tools/_escape_lattice.ts). */
  lattice: Lattice;
  /** Whether a view at the last level still decodes (the scan then fails closed). */
  tooDeep: boolean;
  /** By levels left: the scans of the views met at that level, by final, shown form and text. */
  seen: Map<string, { hits: Hit[]; stop: number }>[];
}

/** Thrown when a level holds more than MAX_VIEWS_PER_LEVEL views: the scan fails closed. */
const TOO_MANY_VIEWS = Symbol("too many escape readings");

/**
 * The matches of `text` and of its decoded views in every sequence of readings, up to
 * {@linkcode ESCAPE_LEVELS} deep; past {@linkcode MAX_VIEWS_PER_LEVEL} views at a level, the
 * lines of `text` that hold a backslash are masked whole.
 */
function scanAllReadings(
  scanRaw: Scan,
  lattice: Lattice,
  text: string,
  final: boolean,
): { hits: Hit[]; stop: number; closed?: boolean } {
  const ctx: ViewScans = { scanRaw, lattice, seen: [], tooDeep: false };
  try {
    const got = scanShown(ctx, text, final, ESCAPE_LEVELS, true);
    if (!ctx.tooDeep) return got;
    return { ...scanLines(ctx, text, final, ESCAPE_DEPTH_MARKER), closed: true };
  } catch (e) {
    if (e !== TOO_MANY_VIEWS) throw e;
    return { ...scanLines(ctx, text, final, ESCAPE_READINGS_MARKER), closed: true };
  }
}

/**
 * The fail-closed scan: matches of `text` as a terminal shows it (no escape decoded), and each
 * line that holds a backslash as a whole. Not final, the last line (it may go on) is held.
 */
function scanLines(
  ctx: ViewScans,
  text: string,
  final: boolean,
  marker: string,
): { hits: Hit[]; stop: number } {
  // Levels -1: nothing decoded, and no check of what would decode.
  const plain = scanShown({ ...ctx, seen: [], tooDeep: false }, text, final, -1, true);
  let stop = plain.stop;
  if (!final && stop > 0) stop = text.lastIndexOf("\n", stop - 1) + 1;
  const lines: Hit[] = [];
  for (let at = 0; at < stop;) {
    const nl = text.indexOf("\n", at);
    const end = nl < 0 || nl > stop ? stop : nl;
    if (holdsEscapeBefore(text, at, end)) {
      lines.push({ at, length: end - at, marker });
    }
    at = end + 1;
  }
  // The line marker first: where a secret's match and a line overlap, the line's reason shows.
  return { hits: joinHits(lines, plain.hits, stop), stop: stopBefore(lines, plain.hits, stop) };
}

/** Whether `text` holds a `\\`, `%` or `&` from `at` to `end`: what may start an escape. */
function holdsEscapeBefore(text: string, at: number, end: number): boolean {
  for (const c of ["\\", "%", "&"]) {
    const i = text.indexOf(c, at);
    if (i >= 0 && i < end) return true;
  }
  return false;
}

/** Whether `text` holds a backslash before U+2028 or U+2029 (a line continuation to JavaScript). */
function holdsLineContinuation(text: string): boolean {
  return text.includes("\\\u2028") || text.includes("\\\u2029");
}

/**
 * The decoded views of `text` that the next level reads: its JavaScript reading and, where they
 * differ, its C and printf `%b` readings, each shown as a terminal shows it. A view holding `\`
 * before U+2028 is shown both with it (a later JavaScript reading takes it as a line
 * continuation) and without it (the invisible character it is to a C reading and a terminal), and
 * so is `text` itself when the C reading keeps it as it is.
 */
function viewsOf(
  text: string,
  final: boolean,
  top = false,
): { ev: EscapeView; cont: boolean }[] {
  maskWork.decoded += text.length;
  const out: { ev: EscapeView; cont: boolean }[] = [];
  const add = (ev: EscapeView) => {
    out.push({ ev, cont: true });
    if (holdsLineContinuation(ev.view)) out.push({ ev, cont: false });
  };
  const js = escapeView(text, final, "js");
  // JavaScript reads nothing here (`\x1W` is no escape to it): C may.
  if (js === null || js.ambiguous) maskWork.decoded += text.length;
  const c = js === null || js.ambiguous ? escapeView(text, final, "c") : null;
  // printf `%b` reads `\0121` as one escape, C as `\012` then `1`.
  if (c !== null && c.printfDiffers) maskWork.decoded += text.length;
  const p = c !== null && c.printfDiffers ? escapeView(text, final, "printf") : null;
  // bash, printf, awk and C compilers keep a byte of `\521` and `\x151`; sed reads `\d081`.
  if (c !== null && c.wrapDiffers) maskWork.decoded += text.length;
  const w = c !== null && c.wrapDiffers ? escapeView(text, final, "wrap") : null;
  // `%51`, `&#81;`, `&amp;`: a URL-encoded or HTML-escaped text (lib/tools/_web_escape.ts), read
  // as a view only where it adds no branch to the backslash readings (the output itself, or a view
  // with no backslash: a URL-encoded JSON string, twice URL-encoded text); elsewhere the lattice
  // reads those tokens at their level. Random escapes decode to `%` and hex often enough that a
  // web view of every view overflows the views a level may hold. A backslash no reading decodes
  // (cut short or unpaired at the end) adds no branch either, so it does not stop the web view:
  // a chain of views ends only where nothing decodes, and the last level's check sees it all.
  const decodes = [js, c, p, w].some((ev) => ev !== null && ev.view !== text);
  const web = (top || !decodes) && mayHoldWebEscape(text) ? webView(text, final) : null;
  if (web !== null) maskWork.decoded += text.length;
  const seen = new Set<string>();
  for (const ev of [js, c, p, w, web]) {
    if (ev === null || seen.has(ev.view)) continue;
    seen.add(ev.view);
    add(ev);
  }
  if (js !== null && js.ambiguous && c === null && holdsLineContinuation(text)) {
    out.push({ ev: asIs(text), cont: false });
  }
  return out;
}

/**
 * The scan of a view {@linkcode ESCAPE_LEVELS} levels down: plain, but sets
 * {@linkcode ViewScans.tooDeep} when a reading still decodes it outside its matches (a secret may lie a
 * level further down; a secret that holds a backslash is matched as it is), and holds an escape the
 * end of a text not final cuts short (it may complete into one that decodes).
 */
function scanLastLevel(
  ctx: ViewScans,
  text: string,
  final: boolean,
): { hits: Hit[]; stop: number } {
  const scanRaw = ctx.scanRaw;
  const views = viewsOf(text, final);
  const tail = Math.min(text.length, ...views.map((v) => v.ev.tail));
  const plain = scanRaw(tail < text.length ? text.slice(0, tail) : text, final);
  if (views.some((v) => v.ev.view !== text)) {
    let at = 0;
    for (const h of [...plain.hits, { at: tail, length: 0 }]) {
      const piece = text.slice(at, h.at);
      const last = h.at === tail;
      if (viewsOf(piece, last ? final : true).some((v) => v.ev.view !== piece)) ctx.tooDeep = true;
      at = h.at + h.length;
    }
  }
  if (tail === text.length) return plain;
  return { hits: plain.hits, stop: stopBefore(plain.hits, [], Math.min(plain.stop, tail)) };
}

/**
 * Where a match of `text` that ends at `end` ends once widened to whole escapes, but for an
 * identity escape it ends at the backslash of (`\;` read as JavaScript): what is left reads the
 * same either way. Not for the quotes and the backslash, whose escapes keep a string whole.
 */
function hitEnd(ev: EscapeView, text: string, end: number): number {
  const wide = spanEndAt(ev, end);
  const c = text.charCodeAt(end);
  if (
    wide !== end + 1 || end === 0 || text.charCodeAt(end - 1) !== 0x5c ||
    c === 0x22 || c === 0x27 || c === 0x5c || spanStartAt(ev, end - 1) !== end - 1
  ) return wide;
  const k = ev.view.length > 0 ? unitAt(ev, end - 1) : -1;
  return k >= 0 && ev.view.charCodeAt(k) === c ? end : wide;
}

/** `text` as a view of itself. */
function asIs(text: string): EscapeView {
  const start = new Int32Array(text.length + 1);
  for (let k = 0; k <= text.length; k++) start[k] = k;
  return {
    view: text,
    start,
    tail: text.length,
    ambiguous: false,
    printfDiffers: false,
    wrapDiffers: false,
  };
}

/**
 * The matches of `text` and of its decoded views (up to `levels` deep, in each reading: see
 * lib/tools/_escape_view.ts), in `text`'s positions. A match in a view
 * covers the whole escapes it comes from. Matches that overlap are joined
 * (the first one's marker). Not final, the first undecided position is the
 * earliest of the text's, of each view's (mapped to the text), and of an
 * escape cut short at the end; a match reaching past it is left for later.
 */
function scanDecoded(
  ctx: ViewScans,
  text: string,
  final: boolean,
  levels: number,
): { hits: Hit[]; stop: number } {
  const scanRaw = ctx.scanRaw;
  const escaped = text.indexOf("\\") >= 0 || mayHoldWebEscape(text);
  if (levels === 0 && escaped) return scanLastLevel(ctx, text, final);
  if (levels <= 0 || !escaped) return scanRaw(text, final);
  const views = viewsOf(text, final, levels === ESCAPE_LEVELS);
  // An escape cut short at the end (only when not final): the text before it, and each view's
  // units before it, are scanned as text that goes on (a secret may begin right before it), and
  // the rest is held. The views are those of the whole text, whose escapes before the cut are
  // read as they are: decoding the text before the cut again would find its last escape cut
  // short in turn, and so on back through a run of such escapes (`\u00\u00…`), each time anew.
  const tail = Math.min(text.length, ...views.map((v) => v.ev.tail));
  const plain = scanRaw(tail < text.length ? text.slice(0, tail) : text, final);
  // Each numeric escape read every way (lib/tools/_numeric_escape.ts), any mix of them.
  const lat = ctx.lattice.scan(text, final);
  maskWork.scanned += lat.walked;
  const outer = lat.hits.length === 0 && lat.stop >= plain.stop ? plain : {
    hits: joinHits(plain.hits, lat.hits, Math.min(plain.stop, lat.stop)),
    stop: stopBefore(plain.hits, lat.hits, Math.min(plain.stop, lat.stop)),
  };
  if (views.length === 0) return outer;
  let stop = outer.stop;
  let widened = outer.hits;
  const mapped: Hit[] = [];
  for (const { ev, cont } of views) {
    // A reading that decodes nothing here (JavaScript's of `\u00\u00`, its tail cut short) reads
    // this very text a level down: what that finds, this level finds already.
    if (cont && ev.view === text) continue;
    const whole = unitsWithin(ev, tail);
    const view = whole < ev.view.length ? ev.view.slice(0, whole) : ev.view;
    // A view may hold terminal sequences its escapes spelled (`\u001b[1m`): matched as shown too.
    const inner = scanShownOnce(ctx, view, final, levels - 1, cont);
    stop = spanStartAt(ev, stop);
    stop = Math.min(stop, ev.start[Math.min(inner.stop, whole)]!);
    // A match of the text covers whole escapes too, so what is left stays text that decodes.
    widened = widened.map((h) => {
      const at = spanStartAt(ev, h.at);
      return { at, length: hitEnd(ev, text, h.at + h.length) - at, marker: h.marker };
    });
    for (const h of inner.hits) mapHit(ev, h, mapped);
  }
  mapped.sort((x, y) => x.at - y.at);
  // Not final, a match that ends where the held text begins may still grow (a view's match past
  // an escape not read yet): it is held too.
  if (stop < text.length) {
    for (const h of [...widened, ...mapped]) {
      if (h.at < stop && h.at + h.length === stop) stop = h.at;
    }
  }
  return { hits: joinHits(widened, mapped, stop), stop: stopBefore(widened, mapped, stop) };
}

/** How many units of `ev` come from text before `end`: each unit whose span ends by then. */
function unitsWithin(ev: EscapeView, end: number): number {
  let k = ev.view.length;
  // Only the few units of an escape cut short (at most ten characters) lie past `end`.
  while (k > 0 && spanEnd(ev, k - 1) > end) k--;
  return k;
}

/**
 * The matches of `text` as a terminal shows it (escape sequences, control and invisible
 * characters skipped, as the masker reads raw text) and of its decoded views, in `text`'s
 * positions; its plain matches too (a sequence's contents). A match in the shown text covers the
 * text from its first to its last character. Not final, a sequence the end of the text cuts short
 * is held from where it starts.
 */
function scanShown(
  ctx: ViewScans,
  text: string,
  final: boolean,
  levels: number,
  cont: boolean,
): { hits: Hit[]; stop: number } {
  if (!hasIgnorable(text)) return scanDecoded(ctx, text, final, levels);
  const tv = terminalView(text, final, cont);
  const plain = ctx.scanRaw(text, final);
  const inner = scanDecoded(ctx, tv.view, final, levels);
  const shown = inner.hits.map((h) => {
    const at = tv.map[h.at]!;
    return { at, length: tv.map[h.at + h.length - 1]! + 1 - at, marker: h.marker };
  });
  let stop = Math.min(plain.stop, inner.stop < tv.view.length ? tv.map[inner.stop]! : tv.tail);
  if (stop < text.length) {
    for (const h of [...plain.hits, ...shown]) {
      if (h.at < stop && h.at + h.length === stop) stop = h.at;
    }
  }
  return { hits: joinHits(plain.hits, shown, stop), stop: stopBefore(plain.hits, shown, stop) };
}

/**
 * {@linkcode scanShown} of a view met at `levels` levels left, once per distinct view of the
 * scan: a view met again (another sequence of readings that spells the same text) reuses the
 * first scan. Throws {@linkcode TOO_MANY_VIEWS} past {@linkcode MAX_VIEWS_PER_LEVEL} of them.
 */
function scanShownOnce(
  ctx: ViewScans,
  text: string,
  final: boolean,
  levels: number,
  cont: boolean,
): { hits: Hit[]; stop: number } {
  const seen = ctx.seen[levels] ??= new Map();
  const key = (final ? "f" : "-") + (cont ? "c" : "-") + text;
  const known = seen.get(key);
  if (known !== undefined) return known;
  if (seen.size >= MAX_VIEWS_PER_LEVEL) throw TOO_MANY_VIEWS;
  const got = scanShown(ctx, text, final, levels, cont);
  seen.set(key, got);
  return got;
}

/**
 * A match of a view as matches of its text, each covering whole escapes. A
 * `"` that is a plain character of the text (not an escape) is left out, the
 * match split around it: it delimits a string there, and masking it would
 * leave JSON text that no longer parses.
 */
function mapHit(ev: EscapeView, h: Hit, out: Hit[]): void {
  let from = h.at;
  const end = h.at + h.length;
  for (let k = h.at; k <= end; k++) {
    const quote = k < end && ev.view.charCodeAt(k) === 0x22 &&
      ev.start[k + 1]! - ev.start[k]! === 1;
    if (k < end && !quote) continue;
    if (k > from) {
      const at = ev.start[from]!;
      out.push({ at, length: spanEnd(ev, k - 1) - at, marker: h.marker });
    }
    from = k + 1;
  }
}

/** `stop`, moved back to the start of a match that reaches past it. */
function stopBefore(a: readonly Hit[], b: readonly Hit[], stop: number): number {
  let s = stop;
  for (const list of [a, b]) {
    for (const h of list) {
      if (h.at < s && h.at + h.length > s) s = h.at;
    }
  }
  // Moving back may leave another match reaching past the new stop.
  return s === stop ? s : stopBefore(a, b, s);
}

/** The matches of two sorted lists before `stop`, in order, overlapping ones joined. */
function joinHits(a: readonly Hit[], b: readonly Hit[], stop: number): Hit[] {
  const end = stopBefore(a, b, stop);
  const all = [...a, ...b].filter((h) => h.at + h.length <= end).sort((x, y) => x.at - y.at);
  const out: Hit[] = [];
  for (const h of all) {
    const last = out[out.length - 1];
    if (last !== undefined && h.at < last.at + last.length) {
      last.length = Math.max(last.length, h.at + h.length - last.at);
    } else out.push({ ...h });
  }
  return out;
}

/** One decided match in a view: where, how long (in view characters), and its marker. */
interface Hit {
  at: number;
  length: number;
  marker: string;
}

/**
 * `raw` up to `end` with each hit replaced by its marker; `rawAt` maps a
 * view position to `raw` (the identity for plain text). Joined in one flat
 * string: a chain of `+=` over many small hits would keep a tree of pieces
 * (and the slices' source) alive as long as the result.
 */
function replaceHits(
  raw: string,
  hits: readonly Hit[],
  end: number,
  rawAt: (i: number) => number = (i) => i,
): string {
  if (hits.length === 0) return raw.slice(0, end);
  const parts: string[] = [];
  let pos = 0;
  for (const hit of hits) {
    parts.push(raw.slice(pos, rawAt(hit.at)), hit.marker);
    pos = rawAt(hit.at + hit.length - 1) + 1;
  }
  parts.push(raw.slice(pos, end));
  return parts.join("");
}

/** `text` masked as plain text (no view), whole. */
function maskPlainWhole(matcher: Matcher, text: string): string {
  return replaceHits(text, matcher.scan(text, true).hits, text.length);
}

/** A masker over plain text (no view): for the contents of escape sequences. */
function createPlainMasker(matcher: Matcher): SecretMasker {
  let pending = "";
  const run = (text: string, final: boolean): string => {
    const { hits, stop } = matcher.scan(text, final);
    pending = text.slice(stop);
    return replaceHits(text, hits, stop);
  };
  return {
    push(text: string): string {
      if (matcher.entries.length === 0 || text.length === 0) return text;
      return run(pending + text, false);
    },
    flush(): string {
      if (pending === "") return "";
      const rest = pending;
      pending = "";
      return run(rest, true);
    },
    get held() {
      return pending.length;
    },
    get active() {
      return matcher.entries.length > 0;
    },
  };
}

/**
 * Characters a terminal or a renderer drops or hides: C0 controls but tab,
 * newline and carriage return, DEL, C1 controls, and the invisible
 * characters of lib/display/invisible.ts (default-ignorable code points and
 * format characters, from their Unicode properties). They never separate a
 * secret's characters.
 */
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/;

/** Whether `chunk` holds anything but shown characters (the fast path skips it otherwise). */
function hasIgnorable(chunk: string): boolean {
  return CONTROL.test(chunk) || HAS_INVISIBLE.test(chunk);
}

/** The length (0, 1 or 2 code units) of the ignorable character at `i` of `text`. */
function ignorableAt(text: string, i: number): number {
  const code = text.charCodeAt(i);
  if (
    (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) ||
    (code >= 0x7f && code <= 0x9f)
  ) return 1;
  return invisibleLength(text, i);
}

/** A control character that ends a string sequence, as lib/display/terminal_text.ts has it. */
function endsString(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
}

/**
 * Raw characters a masker holds at most while a possible secret waits behind
 * control sequences; past it the wait is decided (see the module doc).
 */
export const MAX_HELD_CONTROLS = 65_536;

/** Longest string-sequence payload a terminal view drops (as lib/display/terminal_text.ts). */
const MAX_STRING_SEQUENCE = 4096;

/** Where the escape-sequence reader is (the states of lib/display/terminal_text.ts). */
type SeqState = "ground" | "esc" | "esc_inter" | "csi" | "str" | "str_esc";

/** What the masker's steps share: the held raw text, its view and the map between them. */
interface MaskerState {
  matcher: Matcher;
  /** Whether U+2028 and U+2029 after a backslash stay in the view (see `continuationAt`). */
  continuations?: boolean;
  active: boolean;
  /** The contents of escape sequences, masked as plain text. */
  inner: SecretMasker;
  /** The held text, as it will be output (sequence contents already masked). */
  raw: string;
  /** The held text without sequences and control characters: what a terminal shows. */
  view: string;
  /** The index in `raw` of each character of `view`; null while they are the same text. */
  map: number[] | null;
  state: SeqState;
  /**
   * The opener and payload of the string sequence being read (OSC, DCS…):
   * hidden when it ends well, shown as text when it does not (as
   * `safeText` does), so only then are its characters part of the view.
   */
  str: string;
  /** A high surrogate that ended the last chunk: read with the next one. */
  carry: string;
  /** What a string sequence that ends well is output as (its contents masked, or as it is). */
  seqText: (text: string) => string;
  /** Where in `raw` the last sequence began (the held tail of a terminal view). */
  seqStart: number;
  /**
   * Whether the held view is one line (no newline yet) that the last scan failed closed on: it is
   * held until its line ends (or the flush), not scanned again with every chunk.
   */
  closedLine?: boolean;
}

function toMap(s: MaskerState): number[] {
  if (s.map === null) s.map = Array.from({ length: s.view.length }, (_, i) => i);
  return s.map;
}

function rawAt(s: MaskerState, i: number): number {
  return s.map === null ? i : s.map[i]!;
}

/** The string sequence did not end well: its opener and payload are shown, read as text. */
function releaseString(s: MaskerState): void {
  const text = s.str;
  s.str = "";
  s.state = "ground";
  if (text.charCodeAt(0) >= 0x80) {
    s.raw += text[0];
    readChunk(s, text.slice(1));
  } else readChunk(s, text);
}

function enterSeq(s: MaskerState, next: SeqState, c: string): void {
  s.state = next;
  s.raw += s.inner.push(c);
}

function leaveSeq(s: MaskerState): void {
  s.state = "ground";
  s.raw += s.inner.flush();
}

function openString(s: MaskerState, c: string): void {
  s.raw += s.inner.flush();
  s.state = "str";
  s.str = c;
}

function endString(s: MaskerState, terminator: string): void {
  s.state = "ground";
  s.raw += s.seqText(s.str + terminator);
  s.str = "";
}

/** Read `chunk` into the held text. */
function readChunk(s: MaskerState, chunk: string): void {
  if (s.state === "ground" && !hasIgnorable(chunk)) {
    if (s.map !== null) { for (let i = 0; i < chunk.length; i++) s.map.push(s.raw.length + i); }
    s.raw += chunk;
    s.view += chunk;
    return;
  }
  const m = toMap(s);
  let i = 0;
  // One step per state of the escape-sequence reader (the one of
  // lib/display/terminal_text.ts); each returns where reading goes on.
  while (i < chunk.length) {
    switch (s.state) {
      case "ground":
        i = groundStep(s, m, chunk, i);
        break;
      case "esc":
        i = escStep(s, chunk, i);
        break;
      case "esc_inter":
      case "csi":
        i = paramsStep(s, chunk, i);
        break;
      case "str":
        i = strStep(s, chunk, i);
        break;
      case "str_esc":
        i = strEscStep(s, chunk, i);
        break;
    }
  }
}

/**
 * Whether `c` is U+2028 or U+2029 right after a backslash: a line continuation
 * (JavaScript's, which reads as nothing), kept in the view for the escape reader
 * unless the view is read only the C way (lib/tools/_escape_view.ts), where it
 * is dropped as the invisible character it is.
 */
function continuationAt(s: MaskerState, c: number): boolean {
  return (c === 0x2028 || c === 0x2029) && s.continuations !== false &&
    s.raw.charCodeAt(s.raw.length - 1) === 0x5c;
}

function groundStep(s: MaskerState, m: number[], chunk: string, i: number): number {
  const c = chunk.charCodeAt(i);
  const ch = chunk[i]!;
  const skip = continuationAt(s, c) ? 0 : ignorableAt(chunk, i);
  if (skip === 0) {
    let j = i + 1;
    while (j < chunk.length && ignorableAt(chunk, j) === 0) j++;
    for (let k = 0; k < j - i; k++) m.push(s.raw.length + k);
    s.raw += chunk.slice(i, j);
    s.view += chunk.slice(i, j);
    return j;
  }
  if (
    c === 0x1b || c === 0x9b || c === 0x9d || c === 0x90 || c === 0x98 || c === 0x9e || c === 0x9f
  ) {
    s.seqStart = s.raw.length;
  }
  if (c === 0x1b) enterSeq(s, "esc", ch);
  else if (c === 0x9b) enterSeq(s, "csi", ch);
  else if (c === 0x9d || c === 0x90 || c === 0x98 || c === 0x9e || c === 0x9f) {
    openString(s, ch);
  } else {
    s.raw += chunk.slice(i, i + skip);
    return i + skip;
  }
  return i + 1;
}

function escStep(s: MaskerState, chunk: string, i: number): number {
  const c = chunk.charCodeAt(i);
  const ch = chunk[i]!;
  if (c === 0x5b) enterSeq(s, "csi", ch);
  else if (c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f) {
    openString(s, ch);
  } else if (c >= 0x20 && c <= 0x2f) enterSeq(s, "esc_inter", ch);
  else if (c >= 0x30 && c <= 0x7e) {
    s.raw += s.inner.push(ch);
    leaveSeq(s);
  } else {
    leaveSeq(s); // not a sequence: `c` is read afresh
    return i;
  }
  return i + 1;
}

/** The `esc_inter` and `csi` states. */
function paramsStep(s: MaskerState, chunk: string, i: number): number {
  const c = chunk.charCodeAt(i);
  const ch = chunk[i]!;
  const [lo, hi] = s.state === "csi" ? [0x20, 0x3f] : [0x20, 0x2f];
  if (c >= lo && c <= hi) s.raw += s.inner.push(ch);
  else if (c >= hi + 1 && c <= 0x7e) {
    s.raw += s.inner.push(ch);
    leaveSeq(s);
  } else {
    leaveSeq(s); // cancelled: `c` is read afresh
    return i;
  }
  return i + 1;
}

function strStep(s: MaskerState, chunk: string, i: number): number {
  const c = chunk.charCodeAt(i);
  const ch = chunk[i]!;
  if (c === 0x07 || c === 0x9c) endString(s, ch);
  else if (c === 0x1b) s.state = "str_esc";
  else if (endsString(c)) {
    releaseString(s); // a control character ends it: read afresh
    return i;
  } else {
    s.str += ch;
    if (s.str.length + 1 > MAX_STRING_SEQUENCE) releaseString(s);
  }
  return i + 1;
}

function strEscStep(s: MaskerState, chunk: string, i: number): number {
  const c = chunk.charCodeAt(i);
  if (c === 0x5c) {
    endString(s, "\x1b\\");
    return i + 1;
  }
  releaseString(s); // that ESC starts something new; `c` is read afresh
  s.seqStart = s.raw.length;
  enterSeq(s, "esc", "\x1b");
  return i;
}

/**
 * Output what is decided; with `force`, the held candidate is decided too, as the end of the
 * output would decide it (the fragment rule). Masking it whenever it was a piece of some secret,
 * whatever its length, told the model which of its guesses (`sk-proj-` and a few characters, then
 * 64 Ki characters of sequences) continue a secret it cannot read, one character a turn (attack
 * round 27 d01).
 */
function decide(s: MaskerState, final: boolean, force = false): string {
  const { hits, stop, closed } = s.matcher.scan(s.view, final || force);
  const cut = stop < s.view.length ? rawAt(s, stop) : s.raw.length;
  const out = replaceHits(s.raw, hits, cut, (i) => rawAt(s, i));
  s.raw = s.raw.slice(cut);
  s.view = s.view.slice(stop);
  if (s.map !== null) {
    s.map = s.map.slice(stop).map((x) => x - cut);
    if (s.raw.length === s.view.length) s.map = null;
  }
  s.closedLine = closed === true && !final && !force && s.view.length > 0 &&
    s.view.indexOf("\n") < 0;
  return out;
}

/** Mask the next chunk; returns the text that is final. */
function pushText(s: MaskerState, text: string): string {
  if (!s.active || text.length === 0) return text;
  const [chunk, rest] = splitTrailingSurrogate(s.carry + text);
  s.carry = rest;
  const seen = s.view.length;
  readChunk(s, chunk);
  // A held line the scan failed closed on stays so until it ends (its lines are masked whole):
  // scanning it again with each chunk made streaming it quadratic in its length.
  const waiting = s.closedLine === true && s.view.indexOf("\n", seen) < 0;
  let out = waiting ? "" : decide(s, false);
  if (s.raw.length + s.inner.held + s.str.length > MAX_HELD_CONTROLS && s.view.length > 0) {
    out += decide(s, false, true);
  }
  return out;
}

/** The held-back rest, masked; the masker is reset for reuse. */
function flushText(s: MaskerState): string {
  if (!s.active) return "";
  readChunk(s, s.carry);
  s.carry = "";
  if (s.state === "str" || s.state === "str_esc") {
    const esc = s.state === "str_esc";
    releaseString(s);
    if (esc) s.raw += "\x1b";
  } else if (s.state !== "ground") {
    s.state = "ground";
    s.raw += s.inner.flush();
  }
  const out = decide(s, true);
  s.closedLine = false;
  s.raw = "";
  s.view = "";
  s.map = null;
  return out;
}

/** A matcher of no secrets, for a terminal view (which masks nothing). */
const NO_MATCHER: Matcher = {
  entries: [],
  shortest: Infinity,
  scan: (text) => ({ hits: [], stop: text.length }),
};

/** A masker that masks nothing: a terminal view keeps its text as it is. */
const AS_IS: SecretMasker = { push: (text) => text, flush: () => "", held: 0, active: false };

/**
 * What a terminal shows of `text` (read as the masker reads raw text, see
 * {@linkcode readChunk}), with the index in `text` of each of its code units.
 * Not final, a sequence the end of the text cuts short is not read: `tail` is
 * where it begins (the text's length otherwise).
 */
function terminalView(
  text: string,
  final: boolean,
  continuations: boolean,
): { view: string; map: number[]; tail: number } {
  const s: MaskerState = {
    continuations,
    matcher: NO_MATCHER,
    active: true,
    inner: AS_IS,
    raw: "",
    view: "",
    map: [],
    state: "ground",
    str: "",
    carry: "",
    seqText: (t) => t,
    seqStart: 0,
  };
  readChunk(s, text);
  let tail = text.length;
  if (s.state !== "ground") {
    if (!final) tail = s.seqStart;
    else if (s.state === "str" || s.state === "str_esc") releaseString(s);
  }
  return { view: s.view, map: s.map ?? [], tail };
}

/**
 * The matchers made lately, by the secrets' content: a matcher is read-only
 * once made, and making one (the window table and its 64 KiB filter) cost far
 * more than masking a short text, which a foreign import or a display does
 * for every string of every record. An array seen before is checked against
 * what it held then (a caller may add to it later) without building a key.
 */
const recent = new Map<string, Matcher>();
const MAX_RECENT = 8;
const byArray = new WeakMap<readonly Secret[], { held: string[]; matcher: Matcher }>();

/** What `secrets` holds, flat: value, kind and name of each. */
function heldBy(secrets: readonly Secret[]): string[] {
  return secrets.flatMap((s) => [s.value, s.kind, s.name]);
}

function matcherOf(secrets: readonly Secret[]): Matcher {
  const seen = byArray.get(secrets);
  if (seen !== undefined && seen.held.length === secrets.length * 3) {
    let same = true;
    for (let i = 0; i < secrets.length && same; i++) {
      const s = secrets[i]!;
      same = seen.held[i * 3] === s.value && seen.held[i * 3 + 1] === s.kind &&
        seen.held[i * 3 + 2] === s.name;
    }
    if (same) return seen.matcher;
  }
  const held = heldBy(secrets);
  const key = JSON.stringify(held);
  let matcher = recent.get(key);
  if (matcher === undefined) {
    matcher = createMatcher(secrets);
    if (recent.size >= MAX_RECENT) recent.delete(recent.keys().next().value!);
    recent.set(key, matcher);
  }
  byArray.set(secrets, { held, matcher });
  return matcher;
}

/** Start a masker for `secrets`. */
export function createSecretMasker(secrets: readonly Secret[]): SecretMasker {
  const matcher = matcherOf(secrets);
  const s: MaskerState = {
    matcher,
    active: matcher.entries.length > 0,
    inner: createPlainMasker(matcher),
    raw: "",
    view: "",
    map: null,
    state: "ground",
    str: "",
    carry: "",
    seqText: (text) => maskPlainWhole(matcher, text),
    seqStart: 0,
  };
  return {
    push: (text) => pushText(s, text),
    flush: () => flushText(s),
    get held() {
      return s.raw.length + s.inner.held + s.str.length + s.carry.length;
    },
    get active() {
      return s.active;
    },
  };
}

/**
 * The longest text masked in one scan: a longer one is masked a slice at a
 * time. One scan lists every match before the text is rebuilt around them,
 * and a 60 MB text that is one secret over and over holds millions (attack
 * round 24: `trace show` at 599 MB); slices this small also leave only
 * young garbage behind, collected at once.
 */
export const MASK_SLICE_CHARS = 64 * 1024;

/**
 * The process's collector after masked texts (one every 32 MiB of them): the
 * slices' masked pieces, joined into the result, are garbage V8 frees only in
 * a full collection, and a view going on to render the text piled its own
 * allocations on top of them (a 60 MB text: 57 MB of pieces).
 */
const afterMasked = collectorEvery(32 * 1024 * 1024);

/**
 * The collector inside a long text masked a slice at a time (one every 4 MiB
 * of its slices): a slice's reading of escapes (`%NN`, `\xNN`) leaves several
 * times its size behind, moved to the old generation by the slices after it.
 * Counted only once the whole text was masked, 60 MB of a secret in `%NN`
 * escapes took an export to 467 MB (attack round 25 bounded C9).
 */
const amidLong = collectorEvery(4 * 1024 * 1024);

/** `text` with every secret (and every long enough piece of a long one) replaced by its marker. */
export function maskSecrets(text: string, secrets: readonly Secret[]): string {
  const matcher = matcherOf(secrets);
  // Too short to hold a match, or nothing a terminal hides: no masker state is needed.
  if (text.length < matcher.shortest) return text;
  if (!hasIgnorable(text)) {
    return text.length <= MASK_SLICE_CHARS
      ? maskPlainWhole(matcher, text)
      : maskPlainSliced(matcher, text);
  }
  const masker = createSecretMasker(secrets);
  if (!masker.active) return text;
  const out: string[] = [];
  const long = text.length > MASK_SLICE_CHARS;
  for (const slice of slicesOf(text)) {
    out.push(masker.push(slice));
    if (long) amidLong(slice.length);
  }
  out.push(masker.flush());
  const masked = out.join("");
  out.length = 0;
  afterMasked(text.length);
  return masked;
}

/** `text` in slices of at most {@linkcode MASK_SLICE_CHARS}, never between a surrogate pair's halves. */
function slicesOf(text: string): Generator<string> {
  return pairSafeSlices(text, MASK_SLICE_CHARS);
}

/**
 * A long `text` masked as plain text a slice at a time: `text` itself when
 * nothing matched, and its part before the first match kept as it is.
 */
function maskPlainSliced(matcher: Matcher, text: string): string {
  let out: string[] | undefined; // from the first slice with a match on
  let pending = "";
  let at = 0;
  // A held line the scan failed closed on stays so until it ends (its lines are masked whole), as
  // in the streaming masker: scanning it again with each slice made masking it quadratic in its
  // length (attack round 27 d11: 8 MiB of model text, ten minutes and 600 MB).
  let waiting = false;
  for (const slice of slicesOf(text)) {
    if (waiting && slice.indexOf("\n") < 0) {
      pending += slice;
      at += slice.length;
      continue;
    }
    const chunk = pending + slice;
    const { hits, stop, closed } = matcher.scan(chunk, false);
    waiting = closed === true && stop < chunk.length && chunk.indexOf("\n", stop) < 0;
    if (hits.length > 0) out ??= [text.slice(0, at - pending.length)];
    out?.push(replaceHits(chunk, hits, stop));
    pending = chunk.slice(stop);
    at += slice.length;
    if (out !== undefined) amidLong(slice.length);
  }
  const { hits } = matcher.scan(pending, true);
  if (hits.length > 0) out ??= [text.slice(0, text.length - pending.length)];
  if (out === undefined) return text;
  out.push(replaceHits(pending, hits, pending.length));
  const masked = out.join("");
  out.length = 0;
  afterMasked(text.length);
  return masked;
}
