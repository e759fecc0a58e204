/**
 * Live export: the spans of every session a process runs (subagents
 * included), derived from each trace record right after the trace writer
 * wrote it, and sent by one background exporter. Hosts (`run`, `chat`, a
 * scheduler) start it with {@linkcode startLiveTelemetry}, pass
 * `observeTrace` in their session options, and call `shutdown` after the
 * sessions are disposed: it sends what is left (bounded) and reports the
 * dropped spans once.
 *
 * @module
 */
import type { OmniMessage, SessionMeta } from "../protocol/types.ts";
import { shownEndpoint } from "./_endpoint_shown.ts";
import type { SystemConfig } from "../state/system_config.ts";
import type { TraceObserver } from "../trace/writer.ts";
import { VERSION } from "../version.ts";
import { resolveTelemetry, type TelemetryConfig } from "./config.ts";
import { createSpanExporter, type ExportStats, type SpanExporterOptions } from "./exporter.ts";
import { createSpanBuilder } from "./spans.ts";

/** A running live export. */
export interface LiveTelemetry {
  /** The settings in use. */
  readonly config: TelemetryConfig;
  /** An observer for one session's trace writer (the agent's `observeTrace` option). */
  observeTrace(meta: SessionMeta): TraceObserver;
  /** Close what is open, send the rest, report drops through `warn`; returns the counts. */
  shutdown(): Promise<ExportStats>;
}

/** Options of {@linkcode startLiveTelemetry}. */
export interface LiveTelemetryOptions {
  /** Warnings (one on the first failure, one with the dropped count at shutdown). */
  warn: (line: string) => void;
  /** Exporter tuning (tests). */
  exporter?: Partial<Omit<SpanExporterOptions, "url" | "headers" | "resource" | "warn">>;
}

/** Start exporting to `config`. */
export function startLiveTelemetry(
  config: TelemetryConfig,
  options: LiveTelemetryOptions,
): LiveTelemetry {
  const builder = createSpanBuilder({ includeContent: config.includeContent });
  const exporter = createSpanExporter({
    ...options.exporter,
    url: config.url,
    headers: config.headers,
    resource: { serviceName: "penguin", version: VERSION },
    warn: options.warn,
  });
  return {
    config,
    observeTrace(meta: SessionMeta): TraceObserver {
      let opened = false;
      return {
        appended(msg: OmniMessage) {
          if (!opened) {
            opened = true;
            // A resumed session writes no session_meta: open it from the one it was recorded with.
            if (msg.type !== "session_meta") builder.open(meta, msg.timestamp);
          }
          exporter.push(builder.record(meta.session_id, msg));
        },
        closed() {
          exporter.push(builder.close(meta.session_id));
        },
      };
    },
    async shutdown() {
      exporter.push(builder.closeAll());
      const stats = await exporter.shutdown();
      if (stats.dropped > 0) {
        options.warn(
          `telemetry: ${stats.dropped} span(s) dropped, ${stats.sent} sent to ${
            shownEndpoint(config.url)
          }`,
        );
      }
      return stats;
    },
  };
}

/**
 * Start the live export when the environment or the agent's
 * `system_config.yaml` names an endpoint; null otherwise.
 */
export function liveTelemetryFor(
  env: (name: string) => string | undefined,
  system: SystemConfig | undefined,
  options: LiveTelemetryOptions,
): LiveTelemetry | null {
  const config = resolveTelemetry(env, system, options.warn);
  return config ? startLiveTelemetry(config, options) : null;
}
