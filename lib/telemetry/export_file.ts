/**
 * A recorded session (and, by default, its subagent children found next to
 * its traces) as one OTLP/JSON `ExportTraceServiceRequest`: what
 * `penguin trace export --format otlp` writes. The spans come from the same
 * builder the live export uses, fed the trace records in order.
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
  spans: OtlpSpan[],
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
      spans.push(...builder.record(id, msg));
    }
  }
  return children;
}

/** Export `session` as OTLP/JSON. */
export async function otlpFromSession(
  session: SessionFiles,
  options: OtlpFileOptions = {},
): Promise<ExportTraceServiceRequest> {
  const builder = createSpanBuilder(options);
  const spans: OtlpSpan[] = [];
  const seen = new Set<string>([session.key]);
  const cache = new Map<string, string | null>();
  const queue: SessionFiles[] = [session];
  while (queue.length > 0) {
    const next = queue.shift()!;
    const children = await feed(builder, next, spans, options.onProblem, options.mask);
    if (options.children === false) continue;
    for (const child of children) {
      if (seen.has(child)) continue;
      seen.add(child);
      const found = await findRelative(next.files[0]!.path, child, cache);
      if (found) queue.push(found);
    }
  }
  spans.push(...builder.closeAll());
  return exportRequest(spans, { serviceName: "penguin", version: VERSION });
}
