/**
 * `JSON.parse` of a text read from a file, judged first by
 * {@linkcode jsonShapeProblem}: a line of a trace, of an imported session,
 * of a batch task or results file is written by whoever wrote the file (a
 * model's session, a copied volume), and a line under every byte limit can
 * still parse into tens of millions of values or nest millions deep, which
 * costs gigabytes. A text past the bounds is refused before it is parsed,
 * with a {@linkcode PenguinError} naming what was read and the bound.
 *
 * @module
 */
import { PenguinError } from "./errors.ts";
import { JSON_SHAPE_LIMITS, jsonShapeProblem } from "./json_shape.ts";

/**
 * Why `text` is not parsed — e.g. `too costly to parse: more than 100000
 * JSON objects and arrays` — or undefined when it is within
 * {@linkcode JSON_SHAPE_LIMITS}.
 */
export function jsonCostProblem(text: string): string | undefined {
  const problem = jsonShapeProblem(text, JSON_SHAPE_LIMITS);
  return problem === undefined ? undefined : `too costly to parse: ${problem}`;
}

/**
 * `JSON.parse(text)` when the text is within {@linkcode JSON_SHAPE_LIMITS};
 * else a PenguinError of kind "data": "<what>: not parsed, too costly to
 * parse: <the bound passed>". `what` names the file and the line
 * (`"/tmp/s.jsonl" line 3`). Invalid JSON throws `JSON.parse`'s SyntaxError,
 * as before.
 */
export function parseJsonBounded(text: string, what: string): unknown {
  const problem = jsonCostProblem(text);
  if (problem !== undefined) throw new PenguinError("data", `${what}: not parsed, ${problem}`);
  return JSON.parse(text);
}

/** Whether `err` is the refusal of {@linkcode parseJsonBounded} (not a syntax error). */
export function isJsonCostRefusal(err: unknown): err is PenguinError {
  return err instanceof PenguinError && err.message.includes(": not parsed, too costly to parse: ");
}
