/**
 * Compaction summaries: pulling the summary out of a compaction answer
 * ({@linkcode extractSummary}; an empty result is a failed attempt) and
 * wrapping it in the `[context_summary]` block that replaces the compacted
 * context.
 *
 * @module
 */

const PAIRS: readonly RegExp[] = [
  /\[summary\]([\s\S]*?)\[\/summary\]/g,
  /<summary>([\s\S]*?)<\/summary>/g,
];
const STRAY_TAGS = /\[\/?summary\]|<\/?summary>/g;

function stripTags(text: string): string {
  return text.replace(STRAY_TAGS, "");
}

/**
 * The summary in a compaction answer: the content of the first
 * `[summary]…[/summary]` pair (then the first legacy `<summary>…</summary>`
 * pair) that is non-empty once stray summary tags are removed; otherwise the
 * whole text with every summary block and tag removed (so a tagless answer is
 * used as it is). Always trimmed; an empty result means "no usable summary".
 */
export function extractSummary(raw: string): string {
  for (const pair of PAIRS) {
    for (const m of raw.matchAll(pair)) {
      const content = stripTags(m[1]!).trim();
      if (content !== "") return content;
    }
  }
  let rest = raw;
  for (const pair of PAIRS) rest = rest.replace(pair, "");
  return stripTags(rest).trim();
}

/** The user text that carries a summary into a fresh context: `[context_summary]\n<summary>\n[/context_summary]`. */
export function contextSummaryText(summary: string): string {
  return `[context_summary]\n${summary}\n[/context_summary]`;
}
