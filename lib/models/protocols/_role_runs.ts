/**
 * The turns of a request whose protocol wants the roles to alternate
 * (Anthropic Messages, Gemini): consecutive messages of one role merged
 * into one turn.
 *
 * @module
 */
import type { CompleteMessage } from "../../protocol/types.ts";

/** One message converted: its protocol role and its items under `key`. */
export type RoleTurn<K extends string, T> = { role: string } & { [k in K]: T[] };

/**
 * `history` converted message by message, consecutive messages of one role
 * merged into one turn (their `key` items joined in order); messages that
 * convert to no items are dropped.
 */
export function roleRuns<K extends string, T>(
  history: readonly CompleteMessage[],
  key: K,
  convert: (msg: CompleteMessage) => RoleTurn<K, T>,
): RoleTurn<K, T>[] {
  const out: RoleTurn<K, T>[] = [];
  for (const msg of history) {
    const turn = convert(msg);
    if (turn[key].length === 0) continue;
    const last = out[out.length - 1];
    if (last !== undefined && last.role === turn.role) last[key].push(...turn[key]);
    else out.push(turn);
  }
  return out;
}
