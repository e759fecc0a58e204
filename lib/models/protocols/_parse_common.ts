/**
 * Parse helpers the wire parsers share: the loose JSON readers (`isRecord`,
 * `str`), the nullable zod fields of the OpenAI schemas (`nstr`, `nnum`),
 * a stream event's JSON whose parse failure is a malformed `error` delta,
 * and the HTTP error body read as JSON, else as text.
 *
 * @module
 */
import { z } from "zod";
import { jsonShapeProblem } from "../../protocol/json_shape.ts";
import { MALFORMED_CODE } from "../classify.ts";
import type { WireDelta, WireError } from "../wire.ts";

/** A JSON object as parsed, fields unchecked. */
export type Json = Record<string, unknown>;

/** True for a JSON object (not null, not an array). */
export function isRecord(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `v` when it is a string. */
export function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** A string field that may be null or absent. */
export const nstr: z.ZodOptional<z.ZodNullable<z.ZodString>> = z.string().nullish();

/** A number field that may be null or absent. */
export const nnum: z.ZodOptional<z.ZodNullable<z.ZodNumber>> = z.number().nullish();

/**
 * The JSON of one stream event's data, or the malformed `error` delta
 * `Cannot parse <what>: <why>` when it is not JSON.
 */
export function parseEventJson(
  data: string,
  what: string,
): { ok: true; value: unknown } | { ok: false; delta: WireDelta } {
  try {
    return { ok: true, value: JSON.parse(data) };
  } catch (err) {
    return {
      ok: false,
      delta: {
        type: "error",
        code: MALFORMED_CODE,
        message: `Cannot parse ${what}: ${err instanceof Error ? err.message : String(err)}`,
      },
    };
  }
}

/**
 * The provider error of an HTTP error body: what `read` finds in its JSON,
 * else the body's text (cut at 2000 characters), else `HTTP <status>`.
 */
export function parseErrorBody(
  status: number,
  bodyText: string,
  read: (body: unknown) => WireError | undefined,
): WireError {
  let body: unknown;
  try {
    // One too costly to parse is read as text.
    body = jsonShapeProblem(bodyText) === undefined ? JSON.parse(bodyText) : undefined;
  } catch {
    body = undefined;
  }
  const found = body === undefined ? undefined : read(body);
  return found ?? { message: bodyText.trim().slice(0, 2000) || `HTTP ${status}` };
}
