/**
 * The OTLP/JSON shapes penguin writes (an `ExportTraceServiceRequest` as the
 * OTLP HTTP JSON encoding defines it) and the small encoders they need:
 * trace and span ids as lowercase hex (32 and 16 digits), times as decimal
 * strings of Unix nanoseconds, 64-bit integers as decimal strings, enums as
 * their numbers, attributes as `{key, value: {stringValue | intValue |
 * doubleValue | boolValue | arrayValue}}`. Ids are derived from stable keys
 * (a session id, a tool call id, a record's time) by SHA-256, so the same
 * trace always exports to the same spans.
 *
 * @module
 */
import { createHash } from "node:crypto";

/** An OTLP attribute value. */
export type OtlpAnyValue =
  | { stringValue: string }
  | { intValue: string }
  | { doubleValue: number }
  | { boolValue: boolean }
  | { arrayValue: { values: OtlpAnyValue[] } };

/** One attribute. */
export interface OtlpKeyValue {
  /** Attribute name. */
  key: string;
  /** Attribute value. */
  value: OtlpAnyValue;
}

/** Span kinds (the OTLP enum's numbers). */
export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;
/** Status codes (the OTLP enum's numbers). */
export const STATUS_CODE = { unset: 0, ok: 1, error: 2 } as const;

/** A span as OTLP/JSON writes it. */
export interface OtlpSpan {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** 16 lowercase hex digits. */
  spanId: string;
  /** The parent's span id; absent on a trace's root span. */
  parentSpanId?: string;
  /** Span name. */
  name: string;
  /** One of {@linkcode SPAN_KIND}. */
  kind: number;
  /** Start, Unix nanoseconds as a decimal string. */
  startTimeUnixNano: string;
  /** End, Unix nanoseconds as a decimal string. */
  endTimeUnixNano: string;
  /** Attributes. */
  attributes: OtlpKeyValue[];
  /** Status: code from {@linkcode STATUS_CODE}, message only on errors. */
  status: { code: number; message?: string };
}

/** The body of an OTLP/HTTP traces export. */
export interface ExportTraceServiceRequest {
  /** One entry: penguin's resource. */
  resourceSpans: {
    resource: { attributes: OtlpKeyValue[] };
    scopeSpans: { scope: { name: string; version: string }; spans: OtlpSpan[] }[];
  }[];
}

/** An attribute value's source: numbers that are integers become intValue. */
export type AttrInput = string | number | boolean | readonly string[];

/** Encode one value. Integers become `intValue` strings, other numbers `doubleValue`. */
export function anyValue(v: AttrInput): OtlpAnyValue {
  if (typeof v === "string") return { stringValue: v };
  if (typeof v === "boolean") return { boolValue: v };
  if (typeof v === "number") {
    return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  }
  return { arrayValue: { values: v.map((s) => ({ stringValue: s })) } };
}

/** Attributes from a record; undefined and null values are left out. */
export function attributes(
  rec: Record<string, AttrInput | undefined | null>,
): OtlpKeyValue[] {
  const out: OtlpKeyValue[] = [];
  for (const [key, v] of Object.entries(rec)) {
    if (v === undefined || v === null) continue;
    out.push({ key, value: anyValue(v) });
  }
  return out;
}

function digestHex(parts: readonly string[], hexDigits: number): string {
  const h = createHash("sha256");
  h.update(parts.join("\0"));
  const hex = h.digest("hex").slice(0, hexDigits);
  // An all-zero id is invalid in OTLP; a hash that gives one is bumped.
  return /^0+$/.test(hex) ? hex.slice(0, -1) + "1" : hex;
}

/** A trace id (32 hex digits) derived from `parts`. */
export function traceIdOf(...parts: string[]): string {
  return digestHex(["trace", ...parts], 32);
}

/** A span id (16 hex digits) derived from `parts`. */
export function spanIdOf(...parts: string[]): string {
  return digestHex(["span", ...parts], 16);
}

/** An ISO-8601 time as Unix nanoseconds (a decimal string); "0" when it does not parse. */
export function isoToUnixNano(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? (BigInt(ms) * 1_000_000n).toString() : "0";
}

/** Wrap spans in an `ExportTraceServiceRequest` with penguin's resource and scope. */
export function exportRequest(
  spans: OtlpSpan[],
  resource: { serviceName: string; version: string; extra?: OtlpKeyValue[] },
): ExportTraceServiceRequest {
  return {
    resourceSpans: [{
      resource: {
        attributes: [
          ...attributes({
            "service.name": resource.serviceName,
            "service.version": resource.version,
            "telemetry.sdk.name": "penguin",
            "telemetry.sdk.language": "js",
          }),
          ...(resource.extra ?? []),
        ],
      },
      scopeSpans: [{ scope: { name: "penguin", version: resource.version }, spans }],
    }],
  };
}
