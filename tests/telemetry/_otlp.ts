// Checks of OTLP/JSON shape shared by the telemetry tests: a zod schema of
// ExportTraceServiceRequest as the OTLP HTTP JSON encoding defines it, and
// helpers to look spans up.
import assert from "node:assert/strict";
import { z } from "zod";

const hex = (n: number) =>
  z.string().regex(new RegExp(`^[0-9a-f]{${n}}$`)).refine((s) => !/^0+$/.test(s));
const nanos = z.string().regex(/^[1-9][0-9]*$/);
type Any =
  | { stringValue: string }
  | { intValue: string }
  | { doubleValue: number }
  | { boolValue: boolean }
  | { arrayValue: { values: Any[] } };
const anyValue: z.ZodType<Any> = z.lazy(() =>
  z.union([
    z.strictObject({ stringValue: z.string() }),
    z.strictObject({ intValue: z.string().regex(/^-?[0-9]+$/) }),
    z.strictObject({ doubleValue: z.number() }),
    z.strictObject({ boolValue: z.boolean() }),
    z.strictObject({ arrayValue: z.strictObject({ values: z.array(anyValue) }) }),
  ])
);
const keyValue = z.strictObject({ key: z.string().min(1), value: anyValue });
const span = z.strictObject({
  traceId: hex(32),
  spanId: hex(16),
  parentSpanId: hex(16).optional(),
  name: z.string().min(1),
  kind: z.number().int().min(0).max(5),
  startTimeUnixNano: nanos,
  endTimeUnixNano: nanos,
  attributes: z.array(keyValue),
  status: z.strictObject({ code: z.number().int().min(0).max(2), message: z.string().optional() }),
});

/** The OTLP/JSON ExportTraceServiceRequest schema (the subset penguin writes, strictly). */
export const exportRequestSchema = z.strictObject({
  resourceSpans: z.array(z.strictObject({
    resource: z.strictObject({ attributes: z.array(keyValue) }),
    scopeSpans: z.array(z.strictObject({
      scope: z.strictObject({ name: z.string(), version: z.string() }),
      spans: z.array(span),
    })),
  })),
});

/** One decoded span with its attributes as a plain map. */
export interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string | undefined;
  name: string;
  kind: number;
  start: bigint;
  end: bigint;
  attrs: Record<string, unknown>;
  status: { code: number; message?: string | undefined };
}

/** An OTLP/JSON attribute value as a plain value (an int as a number, an array of plain values). */
export function plainValue(v: Any): unknown {
  if ("stringValue" in v) return v.stringValue;
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return v.doubleValue;
  if ("boolValue" in v) return v.boolValue;
  return v.arrayValue.values.map(plainValue);
}

/**
 * Validate export request bodies (one file, or every batch a collector
 * received) and return their spans; checks ids are unique and every parent
 * is among them.
 */
export function decodeSpans(...bodies: unknown[]): Span[] {
  const spans: Span[] = bodies.map((b) => exportRequestSchema.parse(b)).flatMap((req) =>
    req.resourceSpans.flatMap((r) =>
      r.scopeSpans.flatMap((s) =>
        s.spans.map((x) => ({
          traceId: x.traceId,
          spanId: x.spanId,
          ...(x.parentSpanId ? { parentSpanId: x.parentSpanId } : {}),
          name: x.name,
          kind: x.kind,
          start: BigInt(x.startTimeUnixNano),
          end: BigInt(x.endTimeUnixNano),
          attrs: Object.fromEntries(x.attributes.map((a) => [a.key, plainValue(a.value)])),
          status: x.status,
        }))
      )
    )
  );
  const ids = new Set(spans.map((s) => s.spanId));
  assert.equal(ids.size, spans.length, "span ids are unique");
  for (const s of spans) {
    assert.ok(s.end >= s.start, `${s.name}: ends before it starts`);
    if (s.parentSpanId) assert.ok(ids.has(s.parentSpanId), `${s.name}: parent missing`);
  }
  return spans;
}

/** The span with id `id`. */
export function byId(spans: Span[], id: string | undefined): Span | undefined {
  return spans.find((s) => s.spanId === id);
}

/** Spans whose name starts with `prefix`. */
export function named(spans: Span[], prefix: string): Span[] {
  return spans.filter((s) => s.name.startsWith(prefix));
}
