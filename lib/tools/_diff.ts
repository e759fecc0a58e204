/**
 * Unified line diffs for the file tools' outputs, in git's presentation:
 * `@@ -a,b +c,d @@` headers, ` `/`-`/`+` lines, 3 lines of context, nearby
 * changes merged into one hunk.
 *
 * - {@linkcode lineDiff} (write_file): a real LCS line diff of the middle left
 *   after trimming the common prefix and suffix, with a cell cap above which
 *   only `+X/−Y` counts are reported.
 * - {@linkcode replacementHunks} (edit_file): exact by construction from the
 *   replacement sites, at a cost independent of the file size.
 *
 * Display lines drop a trailing `\r` and are cut at 2000 chars.
 *
 * @module
 */
import { finderOf } from "./_find_text.ts";
import { contentLines } from "./_files.ts";

/** Context lines on each side of a change. */
export const CONTEXT_LINES = 3;
/** LCS table cells above which `lineDiff` reports only counts. */
export const MAX_LCS_CELLS = 250_000;
const MAX_LINE = 2000;

/** One unified hunk. Starts are 1-based; `lines` carry their ` `/`-`/`+` prefix. */
export interface Hunk {
  /** First old line shown. */
  oldStart: number;
  /** Old lines shown (context + removed). */
  oldCount: number;
  /** First new line shown. */
  newStart: number;
  /** New lines shown (context + added). */
  newCount: number;
  /** Prefixed display lines. */
  lines: string[];
}

function display(prefix: string, line: string): string {
  const text = line.endsWith("\r") ? line.slice(0, -1) : line;
  return prefix + (text.length > MAX_LINE ? `${text.slice(0, MAX_LINE)}… [line truncated]` : text);
}

/** Render a hunk; an empty side backs its start up by one, as git does. */
export function renderHunk(h: Hunk): string {
  const a = h.oldCount === 0 ? h.oldStart - 1 : h.oldStart;
  const c = h.newCount === 0 ? h.newStart - 1 : h.newStart;
  return [`@@ -${a},${h.oldCount} +${c},${h.newCount} @@`, ...h.lines].join("\n");
}

/** The result of {@linkcode lineDiff}. */
export type LineDiff =
  | { kind: "identical" }
  | { kind: "too-large"; plus: number; minus: number }
  | { kind: "hunks"; hunks: Hunk[]; plus: number; minus: number };

type Op = { op: " " | "-" | "+"; text: string };

function lcsOps(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const w = m + 1;
  const t = new Int32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      t[i * w + j] = a[i] === b[j]
        ? t[(i + 1) * w + j + 1]! + 1
        : Math.max(t[(i + 1) * w + j]!, t[i * w + j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ op: " ", text: a[i++]! });
      j++;
    } else if (t[(i + 1) * w + j]! >= t[i * w + j + 1]!) ops.push({ op: "-", text: a[i++]! });
    else ops.push({ op: "+", text: b[j++]! });
  }
  while (i < n) ops.push({ op: "-", text: a[i++]! });
  while (j < m) ops.push({ op: "+", text: b[j++]! });
  return ops;
}

/** Group an op list over whole files into hunks with `CONTEXT_LINES` of context. */
function group(ops: Op[]): Hunk[] {
  const oldNo: number[] = [];
  const newNo: number[] = [];
  let o = 1;
  let n = 1;
  for (const { op } of ops) {
    oldNo.push(o);
    newNo.push(n);
    if (op !== "+") o++;
    if (op !== "-") n++;
  }
  const hunks: Hunk[] = [];
  let i = 0;
  while (i < ops.length) {
    if (ops[i]!.op === " ") {
      i++;
      continue;
    }
    const start = Math.max(0, i - CONTEXT_LINES);
    let end = i; // exclusive end of the last change run
    for (let k = i; k < ops.length; k++) {
      if (ops[k]!.op !== " ") end = k + 1;
      else if (k - end >= 2 * CONTEXT_LINES) break;
    }
    const stop = Math.min(ops.length, end + CONTEXT_LINES);
    const slice = ops.slice(start, stop);
    hunks.push({
      oldStart: oldNo[start]!,
      oldCount: slice.filter((x) => x.op !== "+").length,
      newStart: newNo[start]!,
      newCount: slice.filter((x) => x.op !== "-").length,
      lines: slice.map((x) => display(x.op, x.text)),
    });
    i = stop;
  }
  return hunks;
}

const NO_NEWLINE = "\\ No newline at end of file";

/** Same lines, different final newline: git's `\ No newline at end of file` hunk. */
function finalNewlineDiff(a: string[], oldText: string, newText: string): LineDiff {
  const n = a.length;
  const from = Math.max(1, n - CONTEXT_LINES);
  const last = a[n - 1]!;
  const lines = a.slice(from - 1, n - 1).map((l) => display(" ", l));
  lines.push(display("-", last));
  if (!oldText.endsWith("\n")) lines.push(NO_NEWLINE);
  lines.push(display("+", last));
  if (!newText.endsWith("\n")) lines.push(NO_NEWLINE);
  const count = n - from + 1;
  return {
    kind: "hunks",
    hunks: [{ oldStart: from, oldCount: count, newStart: from, newCount: count, lines }],
    plus: 1,
    minus: 1,
  };
}

/** Line diff of two whole contents (write_file overwrites). */
export function lineDiff(oldText: string, newText: string): LineDiff {
  if (oldText === newText) return { kind: "identical" };
  const a = contentLines(oldText);
  const b = contentLines(newText);
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (
    suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]
  ) suf++;
  const midA = a.slice(pre, a.length - suf);
  const midB = b.slice(pre, b.length - suf);
  if (midA.length * midB.length > MAX_LCS_CELLS) {
    return { kind: "too-large", plus: midB.length, minus: midA.length };
  }
  const mid = lcsOps(midA, midB);
  const ops: Op[] = [
    ...a.slice(0, pre).map((text): Op => ({ op: " ", text })),
    ...mid,
    ...a.slice(a.length - suf).map((text): Op => ({ op: " ", text })),
  ];
  const plus = mid.filter((x) => x.op === "+").length;
  const minus = mid.filter((x) => x.op === "-").length;
  if (plus === 0 && minus === 0) return finalNewlineDiff(a, oldText, newText);
  return { kind: "hunks", hunks: group(ops), plus, minus };
}

/** Newlines in `text` from `from` up to (not including) `to`. */
function newlines(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf("\n", from); i !== -1 && i < to; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** Occurrences merged into one hunk at most; a denser hunk is not shown. */
export const MAX_HUNK_SITES = 1000;
/** Characters one hunk's merged occurrences may span at most; a longer hunk is not shown. */
export const MAX_HUNK_SPAN = 64 * 1024;

/** Up to `n` whole lines of `content` before offset `at` (a line start). */
function linesBefore(content: string, at: number, n: number): string[] {
  let p = at;
  for (let k = 0; k < n && p > 0; k++) p = p < 2 ? 0 : content.lastIndexOf("\n", p - 2) + 1;
  return contentLines(content.slice(p, at));
}

/** Up to `n` whole lines of `content` from offset `at` (a line start). */
function linesAfter(content: string, at: number, n: number): string[] {
  let q = at;
  for (let k = 0; k < n && q < content.length; k++) {
    const nl = content.indexOf("\n", q);
    q = nl === -1 ? content.length : nl + 1;
  }
  return contentLines(content.slice(at, q));
}

/**
 * Hunks for an edit_file replacement: one per site (the first occurrence, or
 * every one with `replaceAll`), sites whose context touches merged, at most
 * `maxHunks`. Each entry says how many occurrences it covers.
 *
 * The work is bounded whatever the file: the scan stops after `maxHunks`
 * hunks, only the lines around the shown sites are split out, and a hunk
 * that would merge more than {@linkcode MAX_HUNK_SITES} occurrences or span
 * more than {@linkcode MAX_HUNK_SPAN} characters ends the list without being
 * shown (a replace_all over millions of adjacent lines is summarized by the
 * caller instead of diffed).
 */
export function replacementHunks(
  content: string,
  oldString: string,
  newString: string,
  replaceAll: boolean,
  maxHunks: number,
): { hunk: Hunk; sites: number }[] {
  // Long because: the bounded scan of the sites, then each kept region rendered; both share the
  // regions and their offsets.
  // Lines an occurrence spans beyond its first (its last character counted, not a final newline).
  const inner = newlines(oldString, 0, Math.max(0, oldString.length - 1));
  // Sites as 1-based line ranges, with the offsets of the first site and the end of the last.
  const regions: { a: number; b: number; sites: number; first: number; end: number }[] = [];
  let scanPos = 0;
  let scanLine = 1;
  // Linear whatever the pattern (`_find_text.ts`).
  const find = finderOf(content, oldString);
  for (let at = find.next(0); at !== -1;) {
    const a = scanLine + newlines(content, scanPos, at);
    const end = at + oldString.length;
    // A match ending in a newline joins its line to the next when the replacement does not: include it.
    const b = a + inner + (oldString.endsWith("\n") && end < content.length ? 1 : 0);
    scanPos = at;
    scanLine = a;
    const last = regions[regions.length - 1];
    if (last && a - last.b <= 2 * CONTEXT_LINES) {
      if (last.sites >= MAX_HUNK_SITES || end - last.first > MAX_HUNK_SPAN) {
        regions.pop(); // too dense to show: it is left to the caller's summary
        break;
      }
      last.b = Math.max(last.b, b);
      last.end = end;
      last.sites++;
    } else {
      if (regions.length >= maxHunks) break;
      regions.push({ a, b, sites: 1, first: at, end });
    }
    if (!replaceAll) break;
    at = find.next(end);
  }
  const out: { hunk: Hunk; sites: number }[] = [];
  let shift = 0; // new-minus-old line count of earlier regions
  for (const r of regions) {
    const from = r.first === 0 ? 0 : content.lastIndexOf("\n", r.first - 1) + 1;
    // The end of the last site's line (a site ending in a newline ends its line there).
    const lastChar = Math.max(r.first, r.end - 1);
    const nl = content.indexOf("\n", lastChar);
    let to = nl === -1 ? content.length : nl + 1;
    if (oldString.endsWith("\n") && to < content.length) {
      const next = content.indexOf("\n", to);
      to = next === -1 ? content.length : next + 1;
    }
    const oldRegion = content.slice(from, to);
    const newRegion = oldRegion.split(oldString).join(newString);
    const oldLines = contentLines(oldRegion);
    let minus = oldLines;
    let plus = contentLines(newRegion);
    let lead = 0;
    while (lead < minus.length && lead < plus.length && minus[lead] === plus[lead]) lead++;
    let trail = 0;
    while (
      trail < minus.length - lead && trail < plus.length - lead &&
      minus[minus.length - 1 - trail] === plus[plus.length - 1 - trail]
    ) trail++;
    minus = minus.slice(lead, minus.length - trail);
    plus = plus.slice(lead, plus.length - trail);
    const changeFrom = r.a + lead; // first changed old line
    const before = [...linesBefore(content, from, CONTEXT_LINES), ...oldLines.slice(0, lead)]
      .slice(-CONTEXT_LINES);
    const after = [
      ...oldLines.slice(oldLines.length - trail),
      ...linesAfter(content, to, CONTEXT_LINES),
    ].slice(0, CONTEXT_LINES);
    const ctxFrom = changeFrom - before.length;
    const body: string[] = before.map((l) => display(" ", l));
    // Merged sites leave unchanged lines between them: align them when small enough.
    const middle: Op[] = minus.length * plus.length <= MAX_LCS_CELLS ? lcsOps(minus, plus) : [
      ...minus.map((text): Op => ({ op: "-", text })),
      ...plus.map((text): Op => ({ op: "+", text })),
    ];
    for (const x of middle) body.push(display(x.op, x.text));
    for (const l of after) body.push(display(" ", l));
    const context = before.length + after.length;
    out.push({
      hunk: {
        oldStart: ctxFrom,
        oldCount: context + minus.length,
        newStart: ctxFrom + shift,
        newCount: context + plus.length,
        lines: body,
      },
      sites: r.sites,
    });
    shift += plus.length - minus.length;
  }
  return out;
}
