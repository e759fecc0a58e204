/**
 * The telemetry credentials of an agent's `system_config.yaml`, left out of
 * a snapshot the way MCP credentials are (lib/state/snapshot_secrets.ts):
 * every value of `telemetry.otlp.headers` (`Authorization: Bearer …`) is
 * written as an empty string, and `telemetry.otlp.endpoint` and
 * `telemetry.otlp.traces_endpoint` are cut to `scheme://host[:port]` when
 * they have userinfo, a path, a query or a fragment (the closed rule of
 * lib/state/mcp_url_secrets.ts), with a comment
 * ({@linkcode TELEMETRY_URL_LEFT_OUT}) saying so. Header names, comments and
 * everything else are kept, so the importer sees what to set again.
 *
 * A value of 8 characters or more that would still be in the text
 * afterwards (written twice, or reached through a YAML alias) refuses the
 * snapshot rather than pack it.
 *
 * @module
 */
import { isAlias, isMap, isScalar, type YAMLMap } from "yaml";
import { PenguinError } from "../protocol/errors.ts";
import { urlOrigin, urlSecretParts } from "./mcp_url_secrets.ts";
import { parseForSnapshot, type StrippedConfig } from "./snapshot_secrets.ts";

/** The comment written beside a telemetry URL cut to its origin. */
export const TELEMETRY_URL_LEFT_OUT =
  " penguin: userinfo, path, query and fragment left out; set the full URL";

/** The shortest removed value that must not be left anywhere in the text. */
const CHECKED_LENGTH = 8;

/** `system_config.yaml` text with the telemetry header values emptied and its URLs cut. */
export function withoutTelemetrySecrets(text: string, file: string): StrippedConfig {
  const doc = parseForSnapshot(text, file);
  let otlp = doc.getIn(["telemetry", "otlp"], true) as unknown;
  if (isAlias(otlp)) otlp = otlp.resolve(doc);
  if (!isMap(otlp)) return { text, removed: [] };
  const removed: string[] = [];
  const values: string[] = [];
  let headers = (otlp as YAMLMap).get("headers", true) as unknown;
  if (isAlias(headers)) headers = headers.resolve(doc);
  if (isMap(headers)) {
    for (const pair of (headers as YAMLMap).items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const v = isScalar(pair.value) ? pair.value.value : undefined;
      if (typeof v === "string" && v !== "") values.push(v);
      if (isScalar(pair.value)) pair.value.value = "";
      else pair.value = doc.createNode("");
      removed.push(`telemetry.otlp.headers.${key}`);
    }
  }
  for (const field of ["endpoint", "traces_endpoint"]) {
    let url = (otlp as YAMLMap).get(field, true) as unknown;
    if (isAlias(url)) url = url.resolve(doc);
    if (!isScalar(url) || typeof url.value !== "string") continue;
    const found = urlSecretParts(url.value);
    if (found.length === 0) continue;
    values.push(...found.filter((s) => s.mask).map((s) => s.value));
    const label = (where: string) => where === "url" ? field : `${field}.${where.slice(4)}`;
    removed.push(...new Set(found.map((s) => `telemetry.otlp.${label(s.where)}`)));
    url.value = urlOrigin(url.value);
    url.comment = TELEMETRY_URL_LEFT_OUT;
  }
  if (removed.length === 0) return { text, removed };
  const out = doc.toString();
  // A short value (a user name such as `user`) may be an ordinary word elsewhere in the file.
  const left = values.find((v) => v.length >= CHECKED_LENGTH && out.includes(v));
  if (left !== undefined) {
    throw new PenguinError(
      "runtime",
      `Cannot snapshot "${file}": a telemetry header value or endpoint credential is still in ` +
        `it after removing the values (written twice, or through an alias); write each value once`,
    );
  }
  return { text: out, removed };
}
