/**
 * Helpers shared by the two OpenAI wire modules: JSON chunk parsing that
 * reports problems as `error` deltas, error-body parsing, auth headers,
 * and history walking.
 *
 * @module
 */
import { z } from "zod";
import { jsonShapeProblem } from "../../protocol/json_shape.ts";
import type { CompleteMessage } from "../../protocol/types.ts";
import { isAuthCode, MALFORMED_CODE } from "../classify.ts";
import type { ModelEndpoint, WireDelta, WireError } from "../wire.ts";

/** Parse one SSE data payload against `schema`; a problem becomes a malformed `error` delta. */
export function parseChunk<T>(
  data: string,
  schema: z.ZodType<T>,
  what: string,
): { ok: true; value: T } | { ok: false; delta: WireDelta } {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    return {
      ok: false,
      delta: {
        type: "error",
        code: MALFORMED_CODE,
        message: `Cannot parse ${what} as JSON: ${msg}: ${JSON.stringify(data.slice(0, 120))}`,
      },
    };
  }
  return validateChunk(json, schema, what);
}

/** Validate parsed JSON against `schema`; a mismatch becomes a malformed `error` delta. */
export function validateChunk<T>(
  json: unknown,
  schema: z.ZodType<T>,
  what: string,
): { ok: true; value: T } | { ok: false; delta: WireDelta } {
  const r = schema.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = issue ? `${issue.path.join(".") || "(root)"}: ${issue.message}` : "invalid";
    return {
      ok: false,
      delta: {
        type: "error",
        code: MALFORMED_CODE,
        message: `Unexpected ${what} shape at ${where}`,
      },
    };
  }
  return { ok: true, value: r.data };
}

/** Prefer an auth-looking value among a provider's `code` and `type`. */
export function pickCode(...values: unknown[]): string | undefined {
  const strings = values.filter((v): v is string => typeof v === "string" && v !== "");
  return strings.find((s) => isAuthCode(s)) ?? strings[0];
}

/** Provider message and code of an OpenAI-style error body `{error: {message, code, type}}`. */
export function parseOpenAiError(status: number, bodyText: string): WireError {
  try {
    // One too costly to parse is read as text.
    const body: unknown = jsonShapeProblem(bodyText) === undefined
      ? JSON.parse(bodyText)
      : undefined;
    if (typeof body === "object" && body !== null) {
      const o = body as Record<string, unknown>;
      const e = (typeof o.error === "object" && o.error !== null ? o.error : o) as Record<
        string,
        unknown
      >;
      const message = typeof e.message === "string"
        ? e.message
        : typeof o.error === "string"
        ? o.error
        : typeof o.message === "string"
        ? o.message
        : undefined;
      if (message !== undefined) {
        const code = pickCode(e.code, e.type, e.status);
        return code === undefined ? { message } : { message, code };
      }
    }
  } catch {
    // not JSON: fall through to the raw text
  }
  const text = bodyText.trim().slice(0, 500);
  return { message: text === "" ? `HTTP ${status}` : text };
}

/** Request headers: JSON in, SSE out, Bearer auth only when a key is set. */
export function openAiHeaders(ep: ModelEndpoint): Record<string, string> {
  const h: Record<string, string> = {
    "content-type": "application/json",
    accept: "text/event-stream",
  };
  if (ep.api_key) h.authorization = `Bearer ${ep.api_key}`;
  return h;
}

/** Whether a message is on the model's side of the conversation. */
export function isAssistantSide(m: CompleteMessage): boolean {
  return m.role === "assistant";
}

/** A data URL for inline base64 data. */
export function dataUrl(mime: string, data: string): string {
  return `data:${mime};base64,${data}`;
}

/** Split history into runs of consecutive same-side messages. */
export function runsBySide(history: CompleteMessage[]): CompleteMessage[][] {
  const runs: CompleteMessage[][] = [];
  let cur: CompleteMessage[] = [];
  let side: boolean | undefined;
  for (const m of history) {
    const s = isAssistantSide(m);
    if (side !== undefined && s !== side) {
      runs.push(cur);
      cur = [];
    }
    side = s;
    cur.push(m);
  }
  if (cur.length > 0) runs.push(cur);
  return runs;
}

/** Token usage in penguin terms from input (cached included), cached input and output. */
export function usageDelta(input: number, cached: number, output: number): WireDelta {
  const cache_read = Math.max(0, cached);
  return {
    type: "usage",
    cache_read,
    cache_write: Math.max(0, input - cache_read),
    output: Math.max(0, output),
  };
}
