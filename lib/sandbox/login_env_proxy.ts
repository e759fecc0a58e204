/**
 * The closed grammar of the login snapshot's proxy variables and of any URL
 * in a login value. A proxy variable (`HTTP_PROXY`, `HTTPS_PROXY`,
 * `ALL_PROXY`, their lower-case forms) passes only as one plain proxy
 * address: `scheme://host[:port][/]` with a proxy scheme (`http`, `https`,
 * `socks4`, `socks4a`, `socks5`, `socks5h`) or a bare `host:port`. `NO_PROXY`
 * passes only as a list of host patterns: `*`, a host name (optionally
 * `.`- or `*.`-led), an IPv4 or IPv6 address or network, each with an
 * optional port. A URL anywhere in a login value is plain only with no user
 * information, no path beyond `/`, no query and no fragment.
 *
 * A host is not a secret: it goes in clear in DNS and TLS SNI (the same rule
 * as for MCP URLs). So nothing here judges a word by its shape: what does
 * not fit the grammar is dropped whole.
 *
 * @module
 */

/** A host name: labels of letters, digits and inner dashes, joined by dots. */
const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/** An IPv4 address. */
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** An IPv6 address, loosely: hex groups and colons, an optional trailing IPv4. */
const IPV6 = /^(?=.*:)[0-9A-Fa-f:]{2,39}(?:\.\d{1,3}){0,3}$/;

/** A port. */
const PORT = /^\d{1,5}$/;

/** The schemes a proxy variable may name. */
const PROXY_SCHEMES = new Set(["http:", "https:", "socks4:", "socks4a:", "socks5:", "socks5h:"]);

/** True for a host: a host name, an IPv4 address or a bracketed IPv6 address. */
function isHost(host: string): boolean {
  if (host.startsWith("[") && host.endsWith("]")) return IPV6.test(host.slice(1, -1));
  return IPV4.test(host) || HOST_NAME.test(host);
}

/** True for `host` or `host:port` (`[v6]:port`). */
function isHostPort(s: string): boolean {
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(s);
  if (!m) return false;
  return isHost(m[1] ?? "") && (m[2] === undefined || PORT.test(m[2]));
}

/** True for a URL with no user information, no path beyond `/`, no query and no fragment. */
export function isPlainUrl(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.username !== "" || u.password !== "") return false;
  if (u.search !== "" || u.hash !== "" || url.includes("?") || url.includes("#")) return false;
  if (u.pathname !== "" && u.pathname !== "/") return false;
  return u.host === "" || isHostPort(u.host);
}

/** True for a plain proxy address: `scheme://host[:port][/]` with a proxy scheme, or `host:port`. */
export function isPlainProxy(value: string): boolean {
  if (!value.includes("://")) return isHostPort(value) && value.includes(":");
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s]+$/.test(value)) return false;
  let scheme: string;
  try {
    scheme = new URL(value).protocol.toLowerCase();
  } catch {
    return false;
  }
  return PROXY_SCHEMES.has(scheme) && isPlainUrl(value);
}

/** True for one `NO_PROXY` entry: `*`, `[.|*.]host[:port]`, an IPv4/IPv6 address or network. */
function isNoProxyEntry(entry: string): boolean {
  if (entry === "*") return true;
  const net = /^(.+)\/(\d{1,3})$/.exec(entry);
  if (net) return IPV4.test(net[1] ?? "") || IPV6.test(net[1] ?? "");
  if (IPV6.test(entry)) return true;
  return isHostPort(entry.replace(/^\*?\./, ""));
}

/** True for a `NO_PROXY` value: host patterns separated by commas and blanks. */
export function isPlainNoProxy(value: string): boolean {
  const entries = value.split(/[\s,]+/).filter((e) => e !== "");
  return entries.length > 0 && entries.length <= 256 && entries.every(isNoProxyEntry);
}

/** The value of proxy variable `name` that may reach commands, or `undefined`. */
export function plainProxyValue(name: string, value: string): string | undefined {
  const plain = /^no_proxy$/i.test(name) ? isPlainNoProxy(value) : isPlainProxy(value);
  return plain ? value : undefined;
}
