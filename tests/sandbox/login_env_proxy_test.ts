// Proxy variables of the login snapshot pass only by a closed grammar (issue 26 item 5; review of
// session 37, finding 7): a plain proxy address or a NO_PROXY host list. A word the grammar does not
// know is dropped whole, whatever its shape: a path, query, fragment or user information in a proxy
// URL, a scheme that names no proxy, anything but host patterns in NO_PROXY. Host names pass: a host
// goes in clear in DNS and TLS SNI (the rule MCP URLs follow too).
import assert from "node:assert/strict";
import { plainLoginValue } from "../../lib/sandbox/login_env_values.ts";
import { isPlainNoProxy, isPlainProxy, isPlainUrl } from "../../lib/sandbox/login_env_proxy.ts";

/** Values of real machines that pass whole. */
const KEPT: [string, string][] = [
  ["HTTPS_PROXY", "http://proxy.corp.example.com:3128"],
  ["HTTP_PROXY", "http://10.0.0.1:8080/"],
  ["https_proxy", "https://proxy-eu-west-1.corp.example.com"],
  ["ALL_PROXY", "socks5h://127.0.0.1:1080"],
  ["all_proxy", "socks5://[::1]:1080"],
  ["HTTP_PROXY", "proxy.corp.example.com:3128"],
  ["NO_PROXY", "localhost,127.0.0.1,.corp.example.com"],
  ["no_proxy", "*.svc.cluster.local, 10.0.0.0/8, ::1, [fd00::1]:443, *"],
];

/** Secrets in every part the old shape rule judged by its looks, and words no grammar knows. */
const DROPPED: [string, string][] = [
  ["HTTPS_PROXY", "http://proxy.example.com:3128/mcp/v1/stream"],
  ["HTTPS_PROXY", "http://proxy.example.com:3128/Tok3nInPath"],
  ["HTTPS_PROXY", "http://proxy.example.com:3128/?t=hello"],
  ["HTTPS_PROXY", "http://proxy.example.com:3128/#frag"],
  ["HTTPS_PROXY", "http://user@proxy.example.com:3128"],
  ["HTTPS_PROXY", "http://u:pw@proxy.example.com:3128"],
  ["HTTP_PROXY", "ftp://proxy.example.com:21"],
  ["HTTP_PROXY", "file:///etc/passwd"],
  ["HTTP_PROXY", "proxy.example.com"],
  ["HTTP_PROXY", "http://proxy.example.com:3128 extra-word"],
  ["HTTP_PROXY", "http://pro_xy.example.com:3128"],
  ["ALL_PROXY", "http://proxy.example.com:99999999"],
  ["NO_PROXY", "localhost,secret=plain-looking-words"],
  ["NO_PROXY", "localhost;example.com"],
  ["NO_PROXY", "http://example.com"],
  ["NO_PROXY", ""],
];

Deno.test("login values: real proxy addresses and NO_PROXY lists pass whole", () => {
  for (const [name, value] of KEPT) {
    assert.equal(plainLoginValue(name, value), value, `${name}=${value}`);
  }
});

Deno.test("login values: a proxy value outside the grammar is dropped whole", () => {
  for (const [name, value] of DROPPED) {
    assert.equal(plainLoginValue(name, value), undefined, `${name}=${value}`);
  }
});

Deno.test("proxy grammar: a URL is plain only without user, path beyond /, query or fragment", () => {
  assert.ok(isPlainUrl("https://example.com"));
  assert.ok(isPlainUrl("https://example.com:8443/"));
  assert.ok(!isPlainUrl("https://example.com/simple"));
  assert.ok(!isPlainUrl("https://example.com/?"));
  assert.ok(!isPlainUrl("https://example.com#"));
  assert.ok(!isPlainUrl("https://a@example.com"));
  assert.ok(!isPlainUrl("not a url"));
});

Deno.test("proxy grammar: hosts of random letters pass, since a host is not a secret", () => {
  assert.ok(isPlainProxy("http://nolchkwnfzck.fdtgdjxwwcbz.example.com:3128"));
  assert.ok(isPlainNoProxy(".nolchkwnfzck.example.com"));
});
