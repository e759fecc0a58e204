/**
 * Secret matching over every reading of a text's numeric escapes at once, for secret masking
 * (lib/tools/secret_mask.ts). The text is a lattice: from each position, its character as it is
 * and, at a backslash, each character the escape there may stand for by the rule of
 * lib/tools/_numeric_escape.ts (any leading part of its digit run, whole or its low 8 bits) and as
 * the JavaScript and C readings read it (lib/tools/_escape_view.ts: `\N{…}`, `\cX`, `\n`, line
 * continuations…). A secret (or a piece of a long one) is found when some path through the lattice
 * spells it, whatever mix of spellings the path takes.
 *
 * The search is a longest-common-substring walk along the paths: at each position, for each secret
 * and each place in it, the longest run of the secret ending there that some path spells, and
 * where that path starts. Only the stretches of text around numeric escapes are walked (a path
 * made of plain characters only is the plain scan's), each once, so the work is linear in the
 * text. An escape whose run has more than {@linkcode MOST_NUMERIC_DIGITS} digits is masked whole
 * with {@linkcode LONG_NUMBER_MARKER}: too many readings to follow.
 *
 * @module
 */

import { escapeAt } from "./_escape_view.ts";
import { forEachReading, MOST_NUMERIC_DIGITS, numericEscapeAt } from "./_numeric_escape.ts";
import { mayHoldWebEscape, webEscapeAt } from "./_web_escape.ts";

/** What replaces a numeric escape with more than {@linkcode MOST_NUMERIC_DIGITS} digits. */
export const LONG_NUMBER_MARKER = "[redacted:escapes:long_number]";

/**
 * A secret to look for: whole only (`whole`), or any piece of `least` characters or more
 * (default: the lattice's `fragment`) that ends at place `reach` of the value or later (default
 * 0: anywhere; lib/tools/_public_prefix.ts).
 */
export interface LatticeSecret {
  value: string;
  marker: string;
  whole: boolean;
  least?: number;
  reach?: number;
}

/** A match in the text: where, how long, and its marker. */
export interface LatticeHit {
  at: number;
  length: number;
  marker: string;
}

/** A scanner of texts for secrets over their numeric escapes' readings. */
export interface Lattice {
  /**
   * The matches in `text` that take at least one escape, and the first undecided position (not
   * final: a path that may still go on, or an escape cut short); `walked`: characters walked.
   */
  scan(text: string, final: boolean): { hits: LatticeHit[]; stop: number; walked: number };
}

/**
 * The (secret, place) pairs of the secrets, by the code unit the secret holds there: the pairs of
 * unit `u` are `pairFrom[u]` to `pairFrom[u + 1]` (flat typed arrays: the walk's inner loop reads
 * them for every edge).
 */
interface Pairs {
  pairFrom: Int32Array;
  /** Where the pair's state is kept: secret * stride + place. */
  key: Int32Array;
  /** The place in the secret. */
  place: Int32Array;
  /** The pair's secret. */
  secret: Int32Array;
}

function pairsOf(secrets: readonly LatticeSecret[], stride: number): Pairs {
  const count = new Int32Array(0x10001);
  for (const s of secrets) for (let j = 0; j < s.value.length; j++) count[s.value.charCodeAt(j)]!++;
  const pairFrom = new Int32Array(0x10001);
  for (let u = 0; u < 0x10000; u++) pairFrom[u + 1] = pairFrom[u]! + count[u]!;
  const total = pairFrom[0x10000]!;
  const key = new Int32Array(total);
  const place = new Int32Array(total);
  const secret = new Int32Array(total);
  const next = pairFrom.slice(0, 0x10000);
  // Secret by secret, place by place: a unit's pairs keep the order of the secrets and places.
  secrets.forEach((s, e) => {
    for (let j = 0; j < s.value.length; j++) {
      const at = next[s.value.charCodeAt(j)]!++;
      key[at] = e * stride + j;
      place[at] = j;
      secret[at] = e;
    }
  });
  return { pairFrom, key, place, secret };
}

/** A lattice over `secrets`, pieces of `fragment` characters or more of the ones not `whole`. */
export function createLattice(secrets: readonly LatticeSecret[], fragment: number): Lattice {
  const longest = Math.max(0, ...secrets.map((s) => s.value.length));
  const stride = longest + 1;
  let ctx: Ctx | undefined;
  return {
    scan(text, final) {
      if (secrets.length === 0 || (text.indexOf("\\") < 0 && !mayHoldWebEscape(text))) {
        return { hits: [], stop: text.length, walked: 0 };
      }
      // Made on first use: most maskers never meet a numeric escape.
      ctx ??= contextOf(secrets, fragment, longest, stride);
      return scanLattice(ctx, text, final);
    },
  };
}

/**
 * Positions whose pending states are kept in a ring (an edge longer than that, rare, goes to
 * `far`): a numeric escape of {@linkcode MOST_NUMERIC_DIGITS} digits, its marker and braces fit.
 */
const RING = 64;

interface Ctx {
  secrets: readonly LatticeSecret[];
  fragment: number;
  longest: number;
  stride: number;
  pairs: Pairs;
  /** Each secret's length, 1 where it is matched only whole, and its fewest piece characters. */
  length: Int32Array;
  whole: Uint8Array;
  least: Int32Array;
  /** Where in each secret a piece must end at the earliest. */
  reach: Int32Array;
  /**
   * The states at the position being walked, by key: `stamp[key] === gen` when the key has one,
   * its run's length and start in `len` and `start`; `live` lists the keys that have one.
   */
  stamp: Int32Array;
  len: Int32Array;
  start: Int32Array;
  live: Int32Array;
  liveCount: number;
  gen: number;
  /**
   * The states pending at the positions ahead, by position mod RING: (key, len, start) triples,
   * `count[slot]` numbers of each.
   */
  ring: Int32Array[];
  count: Int32Array;
  /** Those pending more than RING positions ahead, by position. */
  far: Map<number, number[]>;
}

function contextOf(
  secrets: readonly LatticeSecret[],
  fragment: number,
  longest: number,
  stride: number,
): Ctx {
  const keys = secrets.length * stride;
  return {
    secrets,
    fragment,
    longest,
    stride,
    pairs: pairsOf(secrets, stride),
    length: Int32Array.from(secrets, (s) => s.value.length),
    whole: Uint8Array.from(secrets, (s) => s.whole ? 1 : 0),
    least: Int32Array.from(secrets, (s) => s.least ?? fragment),
    reach: Int32Array.from(secrets, (s) => s.reach ?? 0),
    stamp: new Int32Array(keys),
    len: new Int32Array(keys),
    start: new Int32Array(keys),
    live: new Int32Array(keys),
    liveCount: 0,
    gen: 0,
    ring: Array.from({ length: RING }, () => new Int32Array(48)),
    count: new Int32Array(RING),
    far: new Map(),
  };
}

/** Where the first `\`, `%` or `&` of `text` from `from` is (-1 for none). */
function nextTokenStart(text: string, from: number, web: boolean): number {
  if (!web) return text.indexOf("\\", from);
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c || c === 0x25 || c === 0x26) return i;
  }
  return -1;
}

/** Where the token at `i` (a `\`, `%` or `&`) ends, the text's length if cut short; -1: none. */
function tokenEnd(text: string, i: number, final: boolean): number {
  if (text.charCodeAt(i) !== 0x5c) {
    const tok = webEscapeAt(text, i, final);
    return tok === null ? -1 : tok === "cut" ? text.length : i + tok.length;
  }
  const esc = numericEscapeAt(text, i, final);
  return esc === null ? -1 : esc === "cut" ? text.length : esc.end;
}

/**
 * The stretches of `text` around its numeric escapes, percent-encodings and character references
 * (lib/tools/_web_escape.ts), where a path may take one.
 */
function regionsOf(ctx: Ctx, text: string, final: boolean): [number, number][] {
  const out: [number, number][] = [];
  const web = mayHoldWebEscape(text);
  for (let i = nextTokenStart(text, 0, web); i >= 0; i = nextTokenStart(text, i + 1, web)) {
    const end = tokenEnd(text, i, final);
    if (end < 0) continue;
    const from = Math.max(0, i - ctx.longest);
    const to = Math.min(text.length, end + ctx.longest);
    const last = out[out.length - 1];
    if (last !== undefined && from <= last[1]) last[1] = Math.max(last[1], to);
    else out.push([from, to]);
  }
  return out;
}

function scanLattice(
  ctx: Ctx,
  text: string,
  final: boolean,
): { hits: LatticeHit[]; stop: number; walked: number } {
  const hits: LatticeHit[] = [];
  let stop = text.length;
  let walked = 0;
  for (const [from, to] of regionsOf(ctx, text, final)) {
    walked += to - from;
    stop = Math.min(stop, walkRegion(ctx, text, from, to, final, hits));
  }
  hits.sort((a, b) => a.at - b.at);
  return { hits, stop, walked };
}

/** Make the states pending at `p` the current ones (kept per key: the longest run, then the earliest). */
function enter(ctx: Ctx, p: number): void {
  if (ctx.gen >= 0x7ffffffe) {
    ctx.stamp.fill(0);
    ctx.gen = 0;
  }
  ctx.gen++;
  ctx.liveCount = 0;
  const slot = p % RING;
  if (ctx.count[slot]! > 0) {
    take(ctx, ctx.ring[slot]!, ctx.count[slot]!);
    ctx.count[slot] = 0;
  }
  if (ctx.far.size > 0) {
    const list = ctx.far.get(p);
    if (list !== undefined) {
      take(ctx, list, list.length);
      ctx.far.delete(p);
    }
  }
}

/** Take the first `n` numbers of `list`, (key, len, start) triples, into the current states. */
function take(ctx: Ctx, list: Int32Array | number[], n: number): void {
  const { stamp, len, start, live, gen } = ctx;
  for (let i = 0; i < n; i += 3) {
    const key = list[i]!;
    const l = list[i + 1]!;
    const s = list[i + 2]!;
    if (stamp[key] !== gen) {
      stamp[key] = gen;
      len[key] = l;
      start[key] = s;
      live[ctx.liveCount++] = key;
    } else if (l > len[key]! || (l === len[key] && s < start[key]!)) {
      len[key] = l;
      start[key] = s;
    }
  }
}

/**
 * The buffer of the states pending at `t` (seen from `p`), with room for `more` numbers after its
 * `count[slot]`; the slot is `t % RING`, or -1 for an edge past the ring (the buffer is then a
 * fresh one, to be added to `far` with {@linkcode pendFar}).
 */
function pendingBuffer(ctx: Ctx, p: number, t: number, more: number): Int32Array {
  if (t - p >= RING) return new Int32Array(more);
  const slot = t % RING;
  const buf = ctx.ring[slot]!;
  const need = ctx.count[slot]! + more;
  if (need <= buf.length) return buf;
  const grown = new Int32Array(Math.max(need, buf.length * 2));
  grown.set(buf);
  return ctx.ring[slot] = grown;
}

/** The buffer `buf` for `t`, its first `n` numbers written: they are pending at `t` now. */
function pended(ctx: Ctx, p: number, t: number, buf: Int32Array, n: number): void {
  if (t - p < RING) {
    ctx.count[t % RING] = n;
    return;
  }
  let list = ctx.far.get(t);
  if (list === undefined) ctx.far.set(t, list = []);
  for (let i = 0; i < n; i++) list.push(buf[i]!);
}

/**
 * Follow the edge from `p` to `t` that spells `unit`: each run of a secret at `p` that `unit`
 * extends, or a run that `unit` starts, is pending at `t`; a run long enough is a match.
 */
function relax(ctx: Ctx, p: number, t: number, unit: number, hits: LatticeHit[]): void {
  const { pairs, stamp, len, start, length, whole, least, reach } = ctx;
  const from = pairs.pairFrom[unit]!;
  const to = pairs.pairFrom[unit + 1]!;
  if (from === to) return;
  const gen = ctx.gen;
  const buf = pendingBuffer(ctx, p, t, 3 * (to - from));
  let n = t - p < RING ? ctx.count[t % RING]! : 0;
  for (let i = from; i < to; i++) {
    const key = pairs.key[i]!;
    const j = pairs.place[i]!;
    const e = pairs.secret[i]!;
    const has = stamp[key] === gen;
    const l = has ? len[key]! + 1 : 1;
    const s = has ? start[key]! : p;
    const isWhole = whole[e] === 1;
    if (isWhole && l !== j + 1) continue;
    buf[n] = key + 1;
    buf[n + 1] = l;
    buf[n + 2] = s;
    n += 3;
    if (isWhole ? j + 1 === length[e] : l >= least[e]! && j + 1 >= reach[e]!) {
      hits.push({ at: s, length: t - s, marker: ctx.secrets[e]!.marker });
    }
  }
  pended(ctx, p, t, buf, n);
}

/** Carry every state at `p` to `t` unchanged (a line continuation reads as nothing). */
function carry(ctx: Ctx, p: number, t: number): void {
  const buf = pendingBuffer(ctx, p, t, 3 * ctx.liveCount);
  let n = t - p < RING ? ctx.count[t % RING]! : 0;
  for (let i = 0; i < ctx.liveCount; i++) {
    const key = ctx.live[i]!;
    buf[n] = key;
    buf[n + 1] = ctx.len[key]!;
    buf[n + 2] = ctx.start[key]!;
    n += 3;
  }
  pended(ctx, p, t, buf, n);
}

/**
 * Walk `text` from `from` to `to`, adding the matches found to `hits`; returns the first undecided
 * position (`text.length` when none).
 */
function walkRegion(
  ctx: Ctx,
  text: string,
  from: number,
  to: number,
  final: boolean,
  hits: LatticeHit[],
): number {
  let stop = text.length;
  for (let p = from; p < to; p++) {
    enter(ctx, p);
    const c = text.charCodeAt(p);
    relax(ctx, p, p + 1, c, hits);
    if (c === 0x25 || c === 0x26) {
      stop = Math.min(stop, walkWebEscape(ctx, text, p, final, hits));
      continue;
    }
    if (c !== 0x5c) continue;
    const esc = numericEscapeAt(text, p, final);
    if (esc === "cut") {
      stop = Math.min(stop, p, startOfLive(ctx));
      continue;
    }
    if (esc !== null && esc.count > MOST_NUMERIC_DIGITS) {
      hits.push({ at: p, length: esc.end - p, marker: LONG_NUMBER_MARKER });
      continue;
    }
    if (esc !== null) forEachReading(text, esc, (end, unit) => relax(ctx, p, end, unit, hits));
    for (const reading of ["js", "c"] as const) {
      const got = escapeAt(text, p, reading, final);
      if (got === null) continue;
      if (got.units.length === 0) carry(ctx, p, p + got.length);
      else if (got.units.length === 1) relax(ctx, p, p + got.length, got.units[0]!, hits);
    }
  }
  enter(ctx, to);
  if (!final && to === text.length) stop = Math.min(stop, startOfLive(ctx));
  // What is pending past the region is dropped: the next region starts afresh.
  ctx.count.fill(0);
  ctx.far.clear();
  return stop;
}

/**
 * Follow the percent-encoding or character reference at `p`, if any; returns the first undecided
 * position it makes (`text.length` when none).
 */
function walkWebEscape(
  ctx: Ctx,
  text: string,
  p: number,
  final: boolean,
  hits: LatticeHit[],
): number {
  const tok = webEscapeAt(text, p, final);
  if (tok === "cut") return Math.min(p, startOfLive(ctx));
  if (tok === null) return text.length;
  if (tok.long) hits.push({ at: p, length: tok.length, marker: LONG_NUMBER_MARKER });
  else if (tok.point >= 0 && tok.point <= 0xffff) relax(ctx, p, p + tok.length, tok.point, hits);
  return text.length;
}

/** Where the earliest run at the current position that may still go on starts (Infinity for none). */
function startOfLive(ctx: Ctx): number {
  let at = Infinity;
  for (let i = 0; i < ctx.liveCount; i++) {
    const key = ctx.live[i]!;
    const e = Math.floor(key / ctx.stride);
    if (key - e * ctx.stride < ctx.length[e]!) at = Math.min(at, ctx.start[key]!);
  }
  return at;
}
