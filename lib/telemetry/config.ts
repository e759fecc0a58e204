/**
 * Where live spans go: the standard OpenTelemetry environment variables,
 * else the agent's `telemetry.otlp` in `system_config.yaml`.
 *
 * - `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is the traces URL, used as it is;
 * - else `OTEL_EXPORTER_OTLP_ENDPOINT` is a base URL: traces go to
 *   `<base>/v1/traces`;
 * - else `telemetry.otlp.traces_endpoint` (as it is) or
 *   `telemetry.otlp.endpoint` (a base URL);
 * - headers: `telemetry.otlp.headers`, then `OTEL_EXPORTER_OTLP_HEADERS`
 *   and `OTEL_EXPORTER_OTLP_TRACES_HEADERS` (`key=value,key2=value2`, values
 *   percent-decoded) over them;
 * - message contents only with `telemetry.include_content: true`.
 *
 * @module
 */
import type { SystemConfig } from "../state/system_config.ts";
import { shownEndpoint } from "./_endpoint_shown.ts";

/** The resolved export settings. */
export interface TelemetryConfig {
  /** The URL spans are POSTed to. */
  url: string;
  /** Headers of every export. */
  headers: Record<string, string>;
  /** Put message contents on the spans. */
  includeContent: boolean;
  /** Where the URL came from, for messages. */
  source: string;
}

/** The environment variables read (each must be in deno.json's env allow list). */
export const TELEMETRY_ENV = [
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
] as const;

/** Parse an OTLP headers variable (`k=v,k2=v2`); malformed pairs are reported and skipped. */
export function parseOtlpHeaders(
  text: string,
  problem: (message: string) => void,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of text.split(",")) {
    if (pair.trim() === "") continue;
    const eq = pair.indexOf("=");
    const key = eq > 0 ? pair.slice(0, eq).trim() : "";
    if (key === "") {
      problem(`an entry is not key=value`);
      continue;
    }
    let value = pair.slice(eq + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // kept as written
    }
    out[key] = value;
  }
  return out;
}

/** `<base>/v1/traces`, the path added before a query or fragment the base holds. */
function tracesUrl(base: string): string {
  try {
    const u = new URL(base);
    u.pathname = `${u.pathname.replace(/\/+$/, "")}/v1/traces`;
    return u.href;
  } catch {
    return `${base.replace(/\/+$/, "")}/v1/traces`;
  }
}

/**
 * The export settings, or null when no endpoint is set. An endpoint that is
 * not an http(s) URL is reported through `warn` and turns the export off:
 * telemetry never stops a task.
 */
export function resolveTelemetry(
  env: (name: string) => string | undefined,
  system: SystemConfig | undefined,
  warn: (line: string) => void,
): TelemetryConfig | null {
  const t = system?.telemetry;
  const set = (name: string) => {
    const v = env(name)?.trim();
    return v ? v : undefined;
  };
  let url: string | undefined;
  let source = "";
  let raw = "";
  const tracesEnv = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const baseEnv = set("OTEL_EXPORTER_OTLP_ENDPOINT");
  if (tracesEnv) [url, raw, source] = [tracesEnv, tracesEnv, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"];
  else if (baseEnv) {
    [url, raw, source] = [tracesUrl(baseEnv), baseEnv, "OTEL_EXPORTER_OTLP_ENDPOINT"];
  } else if (t?.otlp?.traces_endpoint) {
    const v = t.otlp.traces_endpoint;
    [url, raw, source] = [v, v, "telemetry.otlp.traces_endpoint"];
  } else if (t?.otlp?.endpoint) {
    const v = t.otlp.endpoint;
    [url, raw, source] = [tracesUrl(v), v, "telemetry.otlp.endpoint"];
  }
  if (url === undefined) return null;
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    // Named as messages name an endpoint: its query may hold a token (round 32 v11a).
    warn(`telemetry is off: ${source} (${shownEndpoint(raw)}) is not an http(s) URL`);
    return null;
  }
  const headers: Record<string, string> = { ...(t?.otlp?.headers ?? {}) };
  for (const name of ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"]) {
    const v = set(name);
    if (v) {
      Object.assign(headers, parseOtlpHeaders(v, (m) => warn(`${name}: ${m}; it is skipped`)));
    }
  }
  return { url, headers, includeContent: t?.include_content === true, source };
}
