/**
 * The loss report of a foreign session import: every record (or part of a
 * record) of the foreign file that has no place in a penguin trace, counted
 * per kind with the first place it occurs, so nothing is dropped silently.
 *
 * @module
 */

/** One kind of record that was not mapped. */
export interface LossEntry {
  /** What was not mapped, e.g. `turn_context` or `attachment skill_listing`. */
  kind: string;
  /** How many records (or parts) of this kind. */
  count: number;
  /** The first occurrence, `file:line`. */
  example: string;
  /** Why it was left out, or where its content went instead. */
  reason: string;
}

/** A malformed line: `file:line: reason`. */
export interface LineProblem {
  /** The file. */
  file: string;
  /** 1-based line number. */
  line: number;
  /** What is wrong with it. */
  reason: string;
}

/** Collects {@linkcode LossEntry} values in first-seen order. */
export interface LossBook {
  /** Count one unmapped record of `kind` at `file:line`. */
  note(kind: string, file: string, line: number, reason: string): void;
  /** The entries so far. */
  entries(): LossEntry[];
}

/** A new, empty {@linkcode LossBook}. */
export function createLossBook(): LossBook {
  const byKind = new Map<string, LossEntry>();
  return {
    note(kind, file, line, reason) {
      const e = byKind.get(kind);
      if (e) e.count++;
      else byKind.set(kind, { kind, count: 1, example: `${file}:${line}`, reason });
    },
    entries: () => [...byKind.values()].map((e) => ({ ...e })),
  };
}

/** `file:line: reason`. */
export function formatLineProblem(p: LineProblem): string {
  return `${p.file}:${p.line}: ${p.reason}`;
}
