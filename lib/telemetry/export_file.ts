/**
 * A recorded session (and, by default, its subagent children found next to
 * its traces) as one OTLP/JSON `ExportTraceServiceRequest`: what
 * `penguin trace export --format otlp` writes. The spans come from the same
 * builder the live export uses, fed the trace records in order.
 * {@linkcode writeOtlp} writes the document as the spans finish (the
 * request's framing by hand around spans serialized one at a time), so a
 * session of any size costs its open spans, never all of them.
 *
 * @module
 */
import type { OmniMessage } from "../protocol/types.ts";
import { readTrace, type TraceProblem } from "../trace/reader.ts";
import { findRelative, type SessionFiles } from "../trace/session_files.ts";
import { VERSION } from "../version.ts";
import { exportRequest, type ExportTraceServiceRequest, type OtlpSpan } from "./otlp_json.ts";
import { createSpanBuilder, type SpanBuilder, type SpanBuilderOptions } from "./spans.ts";

/** Options of {@linkcode otlpFromSession}. */
export interface OtlpFileOptions extends SpanBuilderOptions {
  /** Include the subagent children found on disk; default true. */
  children?: boolean;
  /** Called for every skipped line. */
  onProblem?: (p: TraceProblem) => void;
  /** Applied to every record read (the current secrets masked). */
  mask?: ((message: OmniMessage) => OmniMessage) | undefined;
}

async function feed(
  builder: SpanBuilder,
  session: SessionFiles,
  emit: (spans: OtlpSpan[]) => Promise<void>,
  onProblem: ((p: TraceProblem) => void) | undefined,
  mask?: (message: OmniMessage) => OmniMessage,
): Promise<string[]> {
  const children: string[] = [];
  let id: string | null = null;
  for (const file of session.files) {
    for await (
      const { message } of readTrace(file.path, { ...(onProblem ? { onProblem } : {}), mask })
    ) {
      const msg = message as OmniMessage;
      if (msg.origin !== undefined) continue;
      if (id === null) {
        if (msg.type !== "session_meta") continue; // nothing to hang a span on before the meta
        id = msg.payload.session_id;
      }
      if (msg.type === "event_msg" && msg.payload.type === "subagent") {
        children.push(String(msg.payload.session_id));
      }
      await emit(builder.record(id, msg));
    }
  }
  return children;
}

/** Hand every span of `session` (and its children unless turned off) to `emit`, in order. */
async function eachSpan(
  session: SessionFiles,
  options: OtlpFileOptions,
  emit: (spans: OtlpSpan[]) => Promise<void>,
): Promise<void> {
  const builder = createSpanBuilder(options);
  const seen = new Set<string>([session.key]);
  const cache = new Map<string, string | null>();
  const queue: SessionFiles[] = [session];
  while (queue.length > 0) {
    const next = queue.shift()!;
    const children = await feed(builder, next, emit, options.onProblem, options.mask);
    if (options.children === false) continue;
    for (const child of children) {
      if (seen.has(child)) continue;
      seen.add(child);
      const found = await findRelative(next.files[0]!.path, child, cache);
      if (found) queue.push(found);
    }
  }
  await emit(builder.closeAll());
}

const RESOURCE = { serviceName: "penguin", version: VERSION };

/** Export `session` as OTLP/JSON, whole (see {@linkcode writeOtlp} for a session of any size). */
export async function otlpFromSession(
  session: SessionFiles,
  options: OtlpFileOptions = {},
): Promise<ExportTraceServiceRequest> {
  const spans: OtlpSpan[] = [];
  await eachSpan(session, options, (done) => {
    spans.push(...done);
    return Promise.resolve();
  });
  return exportRequest(spans, RESOURCE);
}

/**
 * Write `session` as OTLP/JSON to `write`, a span at a time, ending in a
 * newline: byte for byte `JSON.stringify(await otlpFromSession(...)) + "\n"`.
 */
export async function writeOtlp(
  session: SessionFiles,
  options: OtlpFileOptions,
  write: (text: string) => Promise<void>,
): Promise<void> {
  // The request with no spans, cut where they go: `…"spans":[` and `]}]}]}`.
  const empty = JSON.stringify(exportRequest([], RESOURCE));
  const at = empty.lastIndexOf('"spans":[]') + '"spans":['.length;
  await write(empty.slice(0, at));
  let first = true;
  await eachSpan(session, options, async (done) => {
    for (const span of done) {
      await write((first ? "" : ",") + JSON.stringify(span));
      first = false;
    }
  });
  await write(empty.slice(at) + "\n");
}
