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

/** Kinds named one by one at most; the records of the others are counted together. */
export const MAX_LOSS_KINDS = 200;

/** Characters of a kind (it may come from the file: a record's `type`) kept at most. */
const MAX_KIND_CHARS = 120;

/** The kind the records past {@linkcode MAX_LOSS_KINDS} kinds are counted under. */
export const MORE_LOSS_KINDS = "records of more kinds";

/**
 * A new, empty {@linkcode LossBook}. Past {@linkcode MAX_LOSS_KINDS} kinds,
 * every record of a new kind counts under {@linkcode MORE_LOSS_KINDS}: a file
 * of 1.4 million lines each of a type of its own made as many entries
 * (attack round 23 bounded A04).
 */
export function createLossBook(): LossBook {
  const byKind = new Map<string, LossEntry>();
  return {
    note(given, file, line, reason) {
      const kind = given.length > MAX_KIND_CHARS ? `${given.slice(0, MAX_KIND_CHARS - 1)}…` : given;
      const e = byKind.get(kind) ??
        (byKind.size >= MAX_LOSS_KINDS ? byKind.get(MORE_LOSS_KINDS) : undefined);
      if (e) e.count++;
      else if (byKind.size < MAX_LOSS_KINDS) {
        byKind.set(kind, { kind, count: 1, example: `${file}:${line}`, reason });
      } else {
        byKind.set(MORE_LOSS_KINDS, {
          kind: MORE_LOSS_KINDS,
          count: 1,
          example: `${file}:${line}`,
          reason: `records of kinds past the first ${MAX_LOSS_KINDS} named, not imported`,
        });
      }
    },
    entries: () => [...byKind.values()].map((e) => ({ ...e })),
  };
}

/** `file:line: reason`. */
export function formatLineProblem(p: LineProblem): string {
  return `${p.file}:${p.line}: ${p.reason}`;
}
