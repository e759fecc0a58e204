/**
 * The lattice walk of lib/tools/_escape_lattice.ts as first written (maps of states per position):
 * slow, plainly right, kept as the reference the fast walk is checked against
 * (tests/tools/secret_mask_lattice_reference_test.ts).
 *
 * @module
 */

import { escapeAt } from "../../lib/tools/_escape_view.ts";
import {
  forEachReading,
  MOST_NUMERIC_DIGITS,
  numericEscapeAt,
} from "../../lib/tools/_numeric_escape.ts";

import { LONG_NUMBER_MARKER } from "../../lib/tools/_escape_lattice.ts";

/** A secret to look for: whole only (`whole`), or any piece of `fragment` characters or more. */
export interface LatticeSecret {
  value: string;
  marker: string;
  whole: boolean;
}

/** A match in the text: where, how long, and its marker. */
export interface LatticeHit {
  at: number;
  length: number;
  marker: string;
}

/** The longest run ending at a position, by secret and place: its length and where it starts. */
type States = Map<number, { len: number; start: number }>;

/** A scanner of texts for secrets over their numeric escapes' readings. */
export interface Lattice {
  /**
   * The matches in `text` that take at least one escape, and the first undecided position (not
   * final: a path that may still go on, or an escape cut short); `walked`: characters walked.
   */
  scan(text: string, final: boolean): { hits: LatticeHit[]; stop: number; walked: number };
}

/** A lattice over `secrets`, pieces of `fragment` characters or more of the ones not `whole`. */
export function createReferenceLattice(
  secrets: readonly LatticeSecret[],
  fragment: number,
): Lattice {
  const longest = Math.max(0, ...secrets.map((s) => s.value.length));
  const stride = longest + 1;
  /** For each code unit, the (secret, place) pairs where a secret holds it, as secret * stride + place. */
  const byUnit = new Map<number, number[]>();
  secrets.forEach((s, e) => {
    for (let j = 0; j < s.value.length; j++) {
      const u = s.value.charCodeAt(j);
      const list = byUnit.get(u);
      if (list) list.push(e * stride + j);
      else byUnit.set(u, [e * stride + j]);
    }
  });
  return {
    scan(text, final) {
      if (secrets.length === 0 || text.indexOf("\\") < 0) {
        return { hits: [], stop: text.length, walked: 0 };
      }
      return scanLattice({ secrets, fragment, longest, stride, byUnit }, text, final);
    },
  };
}

interface Ctx {
  secrets: readonly LatticeSecret[];
  fragment: number;
  longest: number;
  stride: number;
  byUnit: Map<number, number[]>;
}

/** The stretches of `text` around its numeric escapes, where a path may take one. */
function regionsOf(ctx: Ctx, text: string, final: boolean): [number, number][] {
  const out: [number, number][] = [];
  for (let i = text.indexOf("\\"); i >= 0; i = text.indexOf("\\", i + 1)) {
    const esc = numericEscapeAt(text, i, final);
    if (esc === null) continue;
    const end = esc === "cut" ? text.length : esc.end;
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
  // Long because: one walk over the region, each position's edges relaxed in place.
  const nodes = new Map<number, States>();
  let stop = text.length;
  const relax = (cur: States | undefined, p: number, t: number, unit: number) => {
    const list = ctx.byUnit.get(unit);
    if (list === undefined) return;
    for (const key of list) {
      const e = Math.floor(key / ctx.stride);
      const j = key - e * ctx.stride;
      const s = ctx.secrets[e]!;
      const prev = cur?.get(key);
      const len = prev !== undefined ? prev.len + 1 : 1;
      const start = prev !== undefined ? prev.start : p;
      if (s.whole && len !== j + 1) continue;
      put(nodes, t, key + 1, len, start);
      if (s.whole ? j + 1 === s.value.length : len >= ctx.fragment) {
        hits.push({ at: start, length: t - start, marker: s.marker });
      }
    }
  };
  for (let p = from; p < to; p++) {
    const cur = nodes.get(p);
    nodes.delete(p);
    relax(cur, p, p + 1, text.charCodeAt(p));
    if (text.charCodeAt(p) !== 0x5c) continue;
    const esc = numericEscapeAt(text, p, final);
    if (esc === "cut") {
      stop = Math.min(stop, p, startOfLive(ctx, cur));
      continue;
    }
    if (esc !== null && esc.count > MOST_NUMERIC_DIGITS) {
      hits.push({ at: p, length: esc.end - p, marker: LONG_NUMBER_MARKER });
      continue;
    }
    if (esc !== null) forEachReading(text, esc, (end, unit) => relax(cur, p, end, unit));
    for (const reading of ["js", "c"] as const) {
      const got = escapeAt(text, p, reading, final);
      if (got === null) continue;
      if (got.units.length === 0) {
        for (const [key, st] of cur ?? []) put(nodes, p + got.length, key, st.len, st.start);
      } else if (got.units.length === 1) relax(cur, p, p + got.length, got.units[0]!);
    }
  }
  if (!final && to === text.length) stop = Math.min(stop, startOfLive(ctx, nodes.get(to)));
  return stop;
}

/** Where the earliest run that may still go on starts (Infinity for none). */
function startOfLive(ctx: Ctx, states: States | undefined): number {
  let at = Infinity;
  for (const [key, st] of states ?? []) {
    const e = Math.floor(key / ctx.stride);
    if (key - e * ctx.stride < ctx.secrets[e]!.value.length) at = Math.min(at, st.start);
  }
  return at;
}

/** Keep the longer run (on a tie, the earlier start) for `key` at position `t`. */
function put(nodes: Map<number, States>, t: number, key: number, len: number, start: number): void {
  let at = nodes.get(t);
  if (at === undefined) nodes.set(t, at = new Map());
  const old = at.get(key);
  if (old === undefined || len > old.len || (len === old.len && start < old.start)) {
    at.set(key, { len, start });
  }
}
