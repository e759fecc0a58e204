/**
 * The secrets of an agent's MCP servers: every `env` value of a stdio
 * server and every header value of a remote one is masked like a vault
 * value (see lib/tools/secret_mask.ts), under the marker
 * `[redacted:mcp:<server>.<NAME>]`. A header written as `<scheme>
 * <credential>` (`Authorization: Bearer …`, `Basic …`, `token …`) is masked
 * by its credential, so the scheme word alone, which is no secret, never
 * starts a masked piece. A server URL's userinfo, path, query and fragment
 * (lib/state/mcp_url_secrets.ts: always secrets; a path, query or fragment
 * under 12 characters is not masked) and the credentials in a stdio
 * server's arguments (lib/state/mcp_arg_secrets.ts: every value that is
 * not an option name or an existing path, masked when 12 characters or
 * more or after an option named like a credential, such as `--token <v>`,
 * `-p <v>`, `--header "Authorization: Bearer <v>"`, and the same parts of a
 * URL argument) are masked too, under `<server>.url.<part>` and `<server>.args[<i>]`.
 *
 * @module
 */
import type { McpServerConfig } from "../state/mod.ts";
import type { Secret } from "../tools/secret_mask.ts";
import { argSecrets } from "../state/mcp_arg_secrets.ts";
import { urlSecretParts } from "../state/mcp_url_secrets.ts";

/** `<scheme> <credential>`: a one-word scheme, whitespace, then the rest. */
const SCHEMED = /^([A-Za-z][A-Za-z0-9_-]*)\s+(\S.*)$/s;

/** The value of header `value` to mask: its credential when it has a scheme word, else all of it. */
export function headerSecretValue(value: string): string {
  // Trimmed as fetch sends it: " key " written by hand reached a server, and the model, as "key".
  const m = SCHEMED.exec(value.trim());
  return m ? m[2]!.trim() : value.trim();
}

/**
 * The password of a `Basic` header value (base64 of `user:password`), which
 * a server may print decoded; undefined for another value or an empty one.
 */
export function basicPassword(value: string): string | undefined {
  const m = SCHEMED.exec(value.trim());
  if (!m || m[1]!.toLowerCase() !== "basic") return undefined;
  let decoded: string;
  try {
    decoded = new TextDecoder("utf-8", { fatal: true }).decode(
      Uint8Array.from(atob(m[2]!.trim()), (c) => c.charCodeAt(0)),
    );
  } catch {
    return undefined;
  }
  const colon = decoded.indexOf(":");
  const password = colon < 0 ? decoded : decoded.slice(colon + 1);
  return password === "" ? undefined : password;
}

/** The secrets of `servers`, in configuration order (env before headers). */
export function mcpSecrets(servers: readonly McpServerConfig[]): Secret[] {
  const out: Secret[] = [];
  for (const server of servers) {
    if (server.transport === "stdio") {
      for (const [key, value] of Object.entries(server.env)) {
        out.push({ kind: "mcp", name: `${server.name}.${key}`, value });
      }
      for (const s of argSecrets(server.args, server.cwd, server.command)) {
        if (s.mask) out.push({ kind: "mcp", name: `${server.name}.${s.where}`, value: s.value });
      }
    } else {
      for (const [key, value] of Object.entries(server.headers)) {
        out.push({ kind: "mcp", name: `${server.name}.${key}`, value: headerSecretValue(value) });
        const password = basicPassword(value);
        if (password !== undefined) {
          out.push({ kind: "mcp", name: `${server.name}.${key}`, value: password });
        }
      }
      for (const s of urlSecretParts(server.url)) {
        if (s.mask) out.push({ kind: "mcp", name: `${server.name}.${s.where}`, value: s.value });
      }
    }
  }
  return out;
}
