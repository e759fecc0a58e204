/**
 * Argument validation for built-in tools: a zod schema checks the parsed
 * arguments, and a failure becomes one explanation the model can act on —
 * the faulty parameter, the names received, and the tool's parameters.
 *
 * @module
 */
import { z } from "zod";
import type { ToolDefinition, ToolEvent } from "./tool.ts";

/** A validated argument object, or the explanation to return as a failed output. */
export type ArgsResult<T> = { ok: true; value: T } | { ok: false; message: string };

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  const t = typeof value;
  return t === "object" ? "an object" : t === "undefined" ? "nothing" : `a ${t}`;
}

function article(type: string): string {
  return /^[aeiou]/i.test(type) ? `an ${type}` : `a ${type}`;
}

function preview(value: unknown): string {
  const s = JSON.stringify(value) ?? String(value);
  return s.length > 60 ? `${s.slice(0, 59)}…` : s;
}

function fault(issue: z.core.$ZodIssue, args: Record<string, unknown>): string {
  const param = String(issue.path[0] ?? "");
  const quoted = `"${param}"`;
  const value = args[param];
  if (param === "") return `the arguments are invalid: ${issue.message}`;
  if (value === undefined) return `required argument ${quoted} is missing`;
  if (issue.code === "invalid_type") {
    return `argument ${quoted} must be ${article(String(issue.expected))}, but ${
      typeName(value)
    } was received`;
  }
  if (issue.code === "too_small" && typeof value === "string" && value.length === 0) {
    return `required argument ${quoted} is empty`;
  }
  return `argument ${quoted} is invalid: ${issue.message} (got ${preview(value)})`;
}

/** The explanation for a call whose arguments do not fit `definition`. */
export function describeArgumentError(
  definition: ToolDefinition,
  args: Record<string, unknown>,
  faultText: string,
  param: string,
): string {
  const tool = definition.name;
  const props = definition.parameters.properties;
  const required = new Set(definition.parameters.required ?? []);
  const names = Object.keys(args);
  const unknown = names.filter((n) => !(n in props));
  let received = names.length === 0
    ? "Arguments received: none."
    : `Arguments received: ${names.join(", ")}.`;
  if (unknown.length > 0) {
    received += ` Not ${unknown.length === 1 ? "a parameter" : "parameters"} of ${tool}: ${
      unknown.join(", ")
    }.`;
  }
  const lines = [`${tool} was not run: ${faultText}.`, received, `Parameters of ${tool}:`];
  for (const [name, schema] of Object.entries(props)) {
    const type = typeof schema.type === "string"
      ? schema.type
      : Array.isArray(schema.type)
      ? schema.type.join(" | ")
      : "any";
    const desc = typeof schema.description === "string" ? `: ${schema.description}` : "";
    lines.push(`- ${name} (${type}, ${required.has(name) ? "required" : "optional"})${desc}`);
  }
  lines.push(
    `Call ${tool} again with a valid "${param}", as one JSON object using exactly these parameter names.`,
  );
  return lines.join("\n");
}

/** Validate `args` against `schema`; on failure explain the first problem. */
export function parseArgs<T>(
  definition: ToolDefinition,
  schema: z.ZodType<T>,
  args: Record<string, unknown>,
): ArgsResult<T> {
  const parsed = schema.safeParse(args);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0]!;
  return {
    ok: false,
    message: describeArgumentError(
      definition,
      args,
      fault(issue, args),
      String(issue.path[0] ?? ""),
    ),
  };
}

/** The `file_path` parameter of the file tools. */
export const filePathArg: z.ZodString = z.string().min(1).describe(
  "Path of the file, relative to the workspace or absolute.",
);

/**
 * A count argument (offset, limit): a number or a numeric string, floored.
 * Absent → `fallback`; anything else is an issue saying what was expected.
 */
export function countArg(
  fallback: number,
  positive: boolean,
  description: string,
): z.ZodType<number> {
  return offeredAs(countValue(fallback, positive), "integer", description);
}

/**
 * `schema` (a lenient one, taking what the model may send instead of the
 * type: numeric strings, `"true"`) offered to the model in the derived JSON
 * Schema as plain `type` with `description`.
 */
export function offeredAs<T>(
  schema: z.ZodType<T>,
  type: "number" | "integer" | "boolean",
  description: string,
): z.ZodType<T> {
  return schema.meta({ type, description });
}

function countValue(fallback: number, positive: boolean): z.ZodType<number> {
  return z.unknown().optional().transform((v, ctx): number => {
    if (v === undefined || v === null) return fallback;
    let n = Number.NaN;
    if (typeof v === "number") n = v;
    else if (typeof v === "string" && v.trim() !== "") n = Number(v.trim());
    if (!Number.isFinite(n) || (positive && Math.floor(n) <= 0)) {
      ctx.addIssue({
        code: "custom",
        message: positive ? "expected a positive number" : "expected a number",
      });
      return z.NEVER;
    }
    return Math.floor(n);
  });
}

/** `text` (output not yet delivered) as a delta event; none when it is empty. */
export function pendingOutput(text: string): ToolEvent[] {
  return text ? [{ type: "delta", text }] : [];
}

/** The events of a failed call: `text` as the output, then a failed result. */
export function fail(text: string): ToolEvent[] {
  return [{ type: "delta", text }, { type: "result", status: "failed" }];
}
