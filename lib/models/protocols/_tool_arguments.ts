/**
 * Replaying a recorded tool call's arguments in the next request. The trace
 * keeps what the model sent byte for byte, even when it is not a JSON object
 * (the tool answered such a call with a failure saying so); upstream
 * servers, however, reject a history whose tool-call arguments are not a
 * JSON object, so every protocol sends `{}` in their place.
 *
 * @module
 */
import { jsonShapeProblem } from "../../protocol/json_shape.ts";

function parseObject(args: string): Record<string, unknown> | undefined {
  // Too costly to parse: replayed as `{}`, like arguments that are not an object.
  if (jsonShapeProblem(args) !== undefined) return undefined;
  try {
    const v: unknown = JSON.parse(args);
    if (typeof v === "object" && v !== null && !Array.isArray(v)) {
      return v as Record<string, unknown>;
    }
  } catch {
    // not JSON
  }
  return undefined;
}

/** The arguments as a JSON object: the parsed value, or `{}` when they are not one. */
export function argumentsObject(args: string): Record<string, unknown> {
  return parseObject(args) ?? {};
}

/** The arguments as JSON object text: unchanged when they are one, else `{}`. */
export function argumentsText(args: string): string {
  return parseObject(args) !== undefined ? args : "{}";
}
