/**
 * "Did you mean …?": the known word closest to a mistyped one.
 *
 * @module
 */

/** The edit distance (insertions, deletions, substitutions, adjacent swaps) between `a` and `b`. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    rows.push([i]);
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        rows[0]!.push(j);
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      }
      rows[i]!.push(d);
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The candidate `word` most likely meant, or undefined when none is close:
 * the only candidate it is a prefix of, else the nearest one within an edit
 * distance of 1 (words up to 4 characters) or 2 (longer ones), and less than
 * half its length — except that a word of 2 characters may still be 1 edit
 * away (`rn` → `run`). Ties go to the first candidate.
 */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  if (word === "") return undefined;
  const extensions = candidates.filter((c) => c !== word && c.startsWith(word));
  if (extensions.length === 1) return extensions[0];
  const half = Math.ceil(word.length / 2) - 1;
  const limit = Math.min(word.length <= 4 ? 1 : 2, word.length >= 2 ? Math.max(1, half) : half);
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d <= limit && d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/** `; did you mean "x"?` for `word` among `candidates`, or "" when nothing is close. */
export function didYouMeanText(
  word: string,
  candidates: readonly string[],
  show: (s: string) => string = (s) => `"${s}"`,
): string {
  const hit = didYouMean(word, candidates);
  return hit === undefined ? "" : `; did you mean ${show(hit)}?`;
}

/**
 * Up to `max` candidates nearest to `word` by {@linkcode editDistance}
 * (case-insensitive), nearest first (ties keep the candidates' order), leaving
 * out those more than a third of `word`'s length (at least 2) away.
 */
export function nearest(word: string, candidates: readonly string[], max = 3): string[] {
  const limit = Math.max(2, Math.floor(word.length / 3));
  return candidates
    .map((c, i) => ({ c, i, d: editDistance(word.toLowerCase(), c.toLowerCase()) }))
    .filter((x) => x.d <= limit && x.c !== word)
    .sort((a, b) => a.d - b.d || a.i - b.i)
    .slice(0, max)
    .map((x) => x.c);
}
