/**
 * Validation of OmniMessages at trust boundaries (trace files, imports, wire).
 *
 * Validation never rewrites the value: on success the caller gets back the
 * very object it passed in, so unknown fields and key order survive and
 * `fidelity` re-serialises byte-for-byte.
 *
 * @module
 */
import type { z } from "zod";
import {
  completeSchemas,
  envelopeSchema,
  eventSchemas,
  partialSchemas,
  sessionMetaSchema,
} from "./_schemas.ts";
import type { OmniMessage } from "./types.ts";

/** Why a value is not a valid OmniMessage. */
export interface ValidationProblem {
  /** Dotted path of the offending field, e.g. `payload.stop_reason`; empty for the whole record. */
  path: string;
  /** What the protocol expects there. */
  expected: string;
  /** A short rendering of what was found. */
  found: string;
  /** One sentence: `payload.stop_reason: expected one of …, found "x"`. */
  message: string;
}

/** The result of validating one value. */
export type ValidationResult =
  | { ok: true; message: OmniMessage }
  | { ok: false; problem: ValidationProblem };

/** Render a value briefly for an error message. */
export function preview(value: unknown, max = 60): string {
  if (value === undefined) return "nothing (the field is missing)";
  let s: string;
  try {
    s = typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value) ?? String(value);
  } catch {
    s = String(value);
  }
  if (s.length > max) s = s.slice(0, max - 1) + "…";
  if (Array.isArray(value)) return `an array ${s}`;
  if (value !== null && typeof value === "object") return `an object ${s}`;
  return s;
}

function at(value: unknown, path: readonly PropertyKey[]): unknown {
  let cur = value;
  for (const key of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

function joinPath(prefix: string, path: readonly PropertyKey[]): string {
  let out = prefix;
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type":
      return `expected ${issue.expected}`;
    case "invalid_value":
      return issue.values.length === 1
        ? `expected ${JSON.stringify(issue.values[0])}`
        : `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "too_small":
      return issue.origin === "string"
        ? "expected a non-empty string"
        : issue.origin === "array"
        ? `expected at least ${issue.minimum} item(s)`
        : `expected a number >= ${issue.minimum}`;
    case "invalid_format":
      return issue.format === "datetime"
        ? "expected an ISO-8601 timestamp"
        : `expected a ${issue.format} string`;
    default:
      return issue.message.replace(/^Invalid input: /, "").replace(/^./, (c) => c.toLowerCase());
  }
}

function problemFrom(
  schema: z.ZodType,
  value: unknown,
  root: unknown,
  prefix: readonly PropertyKey[],
): ValidationProblem | null {
  const result = schema.safeParse(value);
  if (result.success) return null;
  const issue = result.error.issues[0]!;
  const full = [...prefix, ...issue.path];
  const path = joinPath("", full);
  const expected = describeIssue(issue);
  const found = preview(at(root, full));
  return { path, expected, found, message: `${path || "record"}: ${expected}, found ${found}` };
}

function problem(path: string, expected: string, value: unknown): ValidationProblem {
  const found = preview(value);
  return { path, expected, found, message: `${path || "record"}: ${expected}, found ${found}` };
}

/**
 * Check that `value` is an OmniMessage of any kind (partials included).
 * On success the same object is returned, typed.
 */
export function validateMessage(value: unknown): ValidationResult {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, problem: problem("", "expected a JSON object", value) };
  }
  const envProblem = problemFrom(envelopeSchema, value, value, []);
  if (envProblem) return { ok: false, problem: envProblem };
  const env = value as { type: string; payload: Record<string, unknown> };
  const payload = env.payload;
  let schema: z.ZodType | undefined;
  if (env.type === "session_meta") {
    schema = sessionMetaSchema;
  } else {
    const kind = payload.type;
    const table: Record<string, z.ZodType> = env.type === "model_msg"
      ? { ...completeSchemas, ...partialSchemas }
      : eventSchemas;
    if (typeof kind !== "string" || !Object.hasOwn(table, kind)) {
      const names = Object.keys(table).join(", ");
      return { ok: false, problem: problem("payload.type", `expected one of ${names}`, kind) };
    }
    schema = table[kind];
  }
  const p = problemFrom(schema!, payload, value, ["payload"]);
  if (p) return { ok: false, problem: p };
  return { ok: true, message: value as OmniMessage };
}

/** Parse one JSON line and validate it as an OmniMessage. */
export function parseMessageLine(line: string): ValidationResult {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    return {
      ok: false,
      problem: {
        path: "",
        expected: "one JSON object",
        found: "invalid JSON",
        message: `not valid JSON (${detail})`,
      },
    };
  }
  return validateMessage(value);
}
