/**
 * How a telemetry endpoint is named in a message: its scheme, host and path, without the user
 * information, the query or the fragment. A collector's token often rides in the query
 * (`?token=…`, `?api_key=…`); every `penguin run` whose collector failed printed it on stderr,
 * twice, where only `user:password@` was hidden (attack round 31 s02b). Snapshots cut that query
 * too.
 *
 * @module
 */

/** `url` as a message shows it: `scheme://host/path`, `?…` for a query, `#…` for a fragment. */
export function shownEndpoint(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}${u.search ? "?…" : ""}${u.hash ? "#…" : ""}`;
  } catch {
    return "the configured endpoint";
  }
}

/** `text` (an error that may quote the endpoint, as fetch's do) with `url` shown as above. */
export function withEndpointShown(text: string, url: string): string {
  const shown = shownEndpoint(url);
  let out = text.replaceAll(url, shown);
  try {
    const u = new URL(url);
    out = out.replaceAll(u.href, shown);
    for (const part of [u.search, u.hash, u.username, u.password]) {
      if (part.length > 1) out = out.replaceAll(part, "…");
    }
  } catch {
    // Not a URL: only its own spelling is replaced.
  }
  return out;
}
