// penguin's hand-written OTLP/JSON against the official OpenTelemetry JS
// transformer: the spans of a file export, rebuilt as SDK spans and encoded
// by `@opentelemetry/otlp-transformer`'s JSON serializer, come out exactly as
// penguin wrote them (ids, parent ids, names, kinds, times, attributes, status).
import assert from "node:assert/strict";
import { join } from "node:path";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { otlpFromSession } from "../../lib/telemetry/export_file.ts";
import type { OtlpSpan } from "../../lib/telemetry/otlp_json.ts";
import { groupSessions } from "../../lib/trace/session_files.ts";
import { REPO } from "../support/cli.ts";
import { FIXTURES, fixturesPresent, sid, traceBuilder, withTempDir } from "../inspect/_support.ts";
import { plainValue } from "./_otlp.ts";

type SdkSpan = Parameters<typeof JsonTraceSerializer.serializeRequest>[0][number];

function hrTime(nanos: string): [number, number] {
  const n = BigInt(nanos);
  return [Number(n / 1_000_000_000n), Number(n % 1_000_000_000n)];
}

// The API's enums, as an SDK user would set them: what the span is, not penguin's numbers.
const SDK_KIND = { INTERNAL: 0, CLIENT: 2 };
const SDK_STATUS = { UNSET: 0, ERROR: 2 };

/** The SDK span the official serializer takes, with the same data as `s`. */
function sdkSpan(s: OtlpSpan): SdkSpan {
  const ctx = (spanId: string) => ({ traceId: s.traceId, spanId, traceFlags: 1 });
  const failed = s.attributes.some((a) => a.key === "error.type");
  return {
    name: s.name,
    // A model request is a call to another process; everything else happens in penguin.
    kind: s.name.startsWith("chat ") ? SDK_KIND.CLIENT : SDK_KIND.INTERNAL,
    spanContext: () => ctx(s.spanId),
    parentSpanContext: s.parentSpanId ? ctx(s.parentSpanId) : undefined,
    startTime: hrTime(s.startTimeUnixNano),
    endTime: hrTime(s.endTimeUnixNano),
    duration: [0, 0],
    ended: true,
    status: failed
      ? { code: SDK_STATUS.ERROR, ...(s.status.message ? { message: s.status.message } : {}) }
      : { code: SDK_STATUS.UNSET },
    attributes: Object.fromEntries(s.attributes.map((a) => [a.key, plainValue(a.value)])),
    links: [],
    events: [],
    resource: {
      attributes: {},
      asyncAttributesPending: false,
      merge: () => null,
      getRawAttributes: () => [],
    },
    instrumentationScope: { name: "penguin", version: "0.1.0" },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  } as unknown as SdkSpan;
}

/** The fields penguin writes, with 64-bit integers as strings (JSON allows both). */
function comparable(span: Record<string, unknown>) {
  const norm = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(norm);
    if (v && typeof v === "object") {
      return Object.fromEntries(
        Object.entries(v).map(([k, x]) => [k, k === "intValue" ? String(x) : norm(x)]),
      );
    }
    return v;
  };
  const { traceId, spanId, parentSpanId, name, kind, startTimeUnixNano, endTimeUnixNano } = span;
  return norm({
    traceId,
    spanId,
    parentSpanId,
    name,
    kind,
    startTimeUnixNano,
    endTimeUnixNano,
    attributes: span.attributes,
    status: span.status,
  });
}

async function check(paths: string[]) {
  const sessions = await groupSessions(paths);
  const ours = await otlpFromSession(sessions[0]!, { includeContent: true });
  const spans = ours.resourceSpans[0]!.scopeSpans[0]!.spans;
  assert.ok(spans.length > 0);
  const official = JSON.parse(
    new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans.map(sdkSpan))),
  );
  const theirs: Record<string, unknown>[] = official.resourceSpans.flatMap((r: {
    scopeSpans: { spans: Record<string, unknown>[] }[];
  }) => r.scopeSpans.flatMap((s) => s.spans));
  assert.equal(theirs.length, spans.length);
  for (let i = 0; i < spans.length; i++) {
    assert.deepEqual(
      comparable(spans[i] as unknown as Record<string, unknown>),
      comparable(theirs.find((t) => t.spanId === spans[i]!.spanId)!),
      spans[i]!.name,
    );
  }
}

Deno.test({
  name: "otlp export encodes like the official OpenTelemetry transformer (fixtures)",
  ignore: !fixturesPresent,
  async fn() {
    await check([join(FIXTURES, "05-subagent-parent.jsonl")]);
    await check([
      join(FIXTURES, "04-compaction_001.jsonl"),
      join(FIXTURES, "04-compaction_002.jsonl"),
    ]);
  },
});

Deno.test("otlp export encodes like the official OpenTelemetry transformer (samples)", async () => {
  for (const dir of ["plain", "subagents", "compaction"]) {
    const d = join(REPO, "samples", dir);
    const files: string[] = [];
    for await (const e of Deno.readDir(d)) files.push(join(d, e.name));
    for (const s of await groupSessions(files)) await check(s.files.map((f) => f.path));
  }
});

Deno.test("otlp export encodes error spans like the official OpenTelemetry transformer", async () => {
  const id = sid("0ff1c1a1");
  const b = traceBuilder(id).meta().tools()
    .user("go").begin().call("exec_command", { cmd: "x" }, "c1").approve("c1", "deny")
    .usage(1, 2, 3).end("completed", { first_token_ms: 120 }).output("c1", "no", "failed")
    .begin().end("failed", { error_message: "upstream 500", attempt: 1 }).abort("stop");
  await withTempDir(async (dir) => {
    const path = join(dir, `${id}_001.jsonl`);
    await Deno.writeTextFile(path, b.jsonl());
    await check([path]);
  });
});
