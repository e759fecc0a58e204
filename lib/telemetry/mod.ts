/**
 * OpenTelemetry: spans from trace records with the GenAI semantic
 * conventions, their OTLP/JSON encoding, the file export of a recorded
 * session and the live OTLP/HTTP export of running sessions.
 *
 * @module
 */
export {
  attributes,
  exportRequest,
  type ExportTraceServiceRequest,
  type OtlpAnyValue,
  type OtlpKeyValue,
  type OtlpSpan,
  SPAN_KIND,
  spanIdOf,
  STATUS_CODE,
  traceIdOf,
} from "./otlp_json.ts";
export {
  agentNameOf,
  createSpanBuilder,
  genAiProviderName,
  type SpanBuilder,
  type SpanBuilderOptions,
} from "./spans.ts";
export { type OtlpFileOptions, otlpFromSession, writeOtlp } from "./export_file.ts";
export {
  parseOtlpHeaders,
  resolveTelemetry,
  TELEMETRY_ENV,
  type TelemetryConfig,
} from "./config.ts";
export {
  createSpanExporter,
  type ExportStats,
  type SpanExporter,
  type SpanExporterOptions,
} from "./exporter.ts";
export {
  type LiveTelemetry,
  liveTelemetryFor,
  type LiveTelemetryOptions,
  startLiveTelemetry,
} from "./live.ts";
