/**
 * The public part a secret starts with: the format prefix of its kind of
 * token (`sk-proj-`, `ghp_`, `github_pat_`, `AKIA`), which anyone may know.
 *
 * Fragment masking (lib/tools/secret_mask.ts) masks a run of a long secret's
 * characters, and whether a text comes back masked is seen by the model that
 * printed it. A run that could be made mostly of the public prefix would make
 * the masker an oracle: a model printing `sk-proj-` followed by each possible
 * character learns the secret's next character from which guess is masked, then
 * the next, and so on (attack round 25 secrets repro04). So a run counts as a
 * fragment only when at least as many of its characters as a fragment's least
 * (8) follow the public prefix: a guess must then get that many unknown characters
 * right at once (64^8 guesses for base64 text), no easier than guessing them
 * with the whole secret.
 *
 * The prefix is the longest of the known token prefixes it starts with, else, for
 * an API key or an MCP value (a token a service issued), up to three leading words
 * of a letter and up to nine letters or digits, each ended by `-`, `_` or `.`
 * (`tok_`, `sk-or-v1-`), at most {@linkcode MAX_PUBLIC_PREFIX} characters; a JSON
 * Web Token's header (up to its first `.`, when it decodes to a JSON object naming
 * its `alg`) is public too. A vault value is anything the user chose (a
 * passphrase, `Summer2024.Kx9pq`): its leading words are no format anyone knows,
 * and treating them as public left 16 of its 17 characters unmasked (attack round
 * 31 s01a), so it has only the known prefixes and a real JWT header.
 * A random secret may begin like that by chance: then a few of its characters
 * more are treated as public, which leaves a shorter piece of it unmasked, never
 * a guess easier.
 *
 * @module
 */

/** The longest prefix treated as public. */
export const MAX_PUBLIC_PREFIX = 16;

/**
 * Format prefixes of well-known tokens that a generic word rule would miss or
 * cut short (no separator: `AKIA`; a separator inside: `sk-ant-api03-`).
 */
const KNOWN = [
  ...["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "glpat-", "xoxb-", "xoxp-", "xapp-"],
  ...["sk_live_", "sk_test_", "rk_live_", "rk_test_", "pk_live_", "pk_test_", "hf_", "npm_"],
  ...["pypi-", "dop_v1_", "shpat_", "lin_api_"],
  "sk-ant-api03-",
  "sk-ant-admin01-",
  "sk-ant-oat01-",
  "sk-proj-",
  "sk-svcacct-",
  "sk-admin-",
  "sk-or-v1-",
  "github_pat_",
  "AKIA",
  "ASIA",
  "AGPA",
  "AIDA",
  "AROA",
  "AIza",
  "ya29.",
  "SG.",
];

/** The longest JSON Web Token header treated as public. */
const MAX_JWT_HEADER = 64;

/** Up to three words of a letter and up to nine letters or digits, each ended by a separator. */
const WORDS = /^(?:[A-Za-z][A-Za-z0-9]{0,9}[-_.]){1,3}/;

/** Whether `header` (base64url) decodes to a JSON object with an `alg` string: a JWT's header. */
function jwtHeader(header: string): boolean {
  if (!/^[A-Za-z0-9_-]+$/.test(header)) return false;
  try {
    const text = atob(
      header.replace(/-/g, "+").replace(/_/g, "/").padEnd(
        Math.ceil(header.length / 4) * 4,
        "=",
      ),
    );
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === "object" && parsed !== null &&
      typeof (parsed as { alg?: unknown }).alg === "string";
  } catch {
    return false;
  }
}

/**
 * How many leading characters of `secret` are its public prefix, never more
 * than leaves `least` characters after it (so the whole value, or its last
 * piece of `least` characters, is always masked). `kind` is where the secret
 * comes from: a vault value has no leading words taken for a format.
 */
export function publicPrefixLength(
  secret: string,
  least: number,
  kind: "vault" | "api_key" | "mcp" = "api_key",
): number {
  let n = 0;
  for (const k of KNOWN) if (k.length > n && secret.startsWith(k)) n = k.length;
  const words = kind === "vault" ? 0 : WORDS.exec(secret)?.[0].length ?? 0;
  n = Math.min(Math.max(n, words), MAX_PUBLIC_PREFIX);
  const dot = secret.startsWith("eyJ") ? secret.indexOf(".") : -1;
  // A real header only: any text starting `eyJ` made its first 64 characters public (s05b).
  if (dot > 0 && dot < MAX_JWT_HEADER && jwtHeader(secret.slice(0, dot))) {
    n = Math.max(n, dot + 1);
  }
  return Math.max(0, Math.min(n, secret.length - least));
}
