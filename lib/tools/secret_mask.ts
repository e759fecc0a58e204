/**
 * Masking of known secret values in tool output. A session knows its secrets
 * exactly (the agent's vault values, the configured API keys and the `env` /
 * header values of its MCP servers), so every occurrence of one is replaced by
 * a marker before the text is recorded, rendered or sent to the model:
 *
 * - a vault value becomes `[redacted:vault:<KEY>]` (the vault key);
 * - an API key becomes `[redacted:api_key:<NAME>]`, where NAME is the env var
 *   it is read from (`OPENAI_API_KEY`) or, for a key stored inline in a model
 *   entry of `.project_config.toml` (or given with `--api-key`), the provider
 *   group of that entry (`openai`);
 * - an MCP server's value becomes `[redacted:mcp:<server>.<NAME>]`, NAME being
 *   the env var or the header name.
 *
 * Values shorter than {@linkcode MIN_SECRET_LENGTH} characters are not
 * masked: masking `1234` or `a` would destroy ordinary output and hide
 * nothing an attacker could not guess. A value of
 * {@linkcode FRAGMENT_SECRET_LENGTH} characters or more is also masked in
 * part: any run of at least {@linkcode FRAGMENT_LENGTH} consecutive characters
 * of it (a prefix, a suffix or a middle piece) is replaced by its marker, so a
 * command that prints a secret in pieces (`cut -c1-12`, `tail -c 16`) leaks
 * no piece long enough to matter. Shorter values are masked only whole.
 *
 * The masker is streaming: a value split across chunks is still found, and
 * the text held back between chunks is only a tail that could still become
 * (or extend) a match: less than the longest secret's length. Matching is
 * leftmost first, then longest (a longer secret, or a longer run of one, wins
 * at the same position; on a tie the longer secret's marker, then the first
 * given); the concatenation of what `push` and `flush` return equals
 * {@linkcode maskSecrets} of the whole text.
 *
 * Fragments are found through a table of every {@linkcode FRAGMENT_LENGTH}-
 * character window of every long secret, keyed by a rolling hash: the text
 * is scanned once, a window whose hash is in the table is compared, and a
 * true window is extended as far as the secret and the text agree. The cost
 * is linear in the text, whatever the number of secrets.
 *
 * @module
 */

/** Shortest value that is masked; shorter ones are left alone. */
export const MIN_SECRET_LENGTH = 6;

/** Shortest value whose pieces are masked too (shorter values only whole). */
export const FRAGMENT_SECRET_LENGTH = 12;

/** Shortest piece of a long value that is masked. */
export const FRAGMENT_LENGTH = 8;

/** Where a secret comes from. */
export type SecretKind = "vault" | "api_key" | "mcp";

/** One secret value and the name its marker shows. */
export interface Secret {
  /** `vault`, `api_key` or `mcp`. */
  kind: SecretKind;
  /** Vault key, env var name, provider group or `<server>.<name>` (never the value). */
  name: string;
  /** The value to hide. */
  value: string;
}

/** The marker that replaces a secret: `[redacted:<kind>:<name>]`. */
export function secretMarker(secret: Pick<Secret, "kind" | "name">): string {
  return `[redacted:${secret.kind}:${secret.name}]`;
}

/** Secrets of a vault, one per entry (key order). */
export function vaultSecrets(vault: Readonly<Record<string, string>> | undefined): Secret[] {
  if (!vault) return [];
  return Object.entries(vault).map(([name, value]) => ({ kind: "vault", name, value }));
}

/** A streaming masker over a fixed set of secrets. */
export interface SecretMasker {
  /** Mask the next chunk; returns the text that is final (possibly less than given). */
  push(text: string): string;
  /** The held-back rest, masked; the masker is reset for reuse. */
  flush(): string;
  /** Characters currently held back. */
  readonly held: number;
  /** False when there is nothing to mask (every call returns its input). */
  readonly active: boolean;
}

interface Entry {
  value: string;
  marker: string;
}

/** One window of a long secret: which secret, and where in it the window starts. */
interface Window {
  entry: Entry;
  offset: number;
}

/** The usable secrets: long enough, one per value (first wins), longest first. */
function entriesOf(secrets: readonly Secret[]): Entry[] {
  const seen = new Set<string>();
  const out: Entry[] = [];
  for (const s of secrets) {
    if (typeof s.value !== "string" || s.value.length < MIN_SECRET_LENGTH) continue;
    if (seen.has(s.value)) continue;
    seen.add(s.value);
    out.push({ value: s.value, marker: secretMarker(s) });
  }
  // Stable: equal lengths keep the order given.
  return out.sort((a, b) => b.value.length - a.value.length);
}

const HASH_BASE = 0x01000193;
/** HASH_BASE ** (FRAGMENT_LENGTH - 1), modulo 2^32: the weight of a window's first character. */
const HASH_LEAD = (() => {
  let m = 1;
  for (let i = 1; i < FRAGMENT_LENGTH; i++) m = Math.imul(m, HASH_BASE);
  return m;
})();

/** Hash of the FRAGMENT_LENGTH characters of `s` from `at`. */
function windowHash(s: string, at: number): number {
  let h = 0;
  for (let i = 0; i < FRAGMENT_LENGTH; i++) {
    h = (Math.imul(h, HASH_BASE) + s.charCodeAt(at + i)) | 0;
  }
  return h;
}

/** The window table of the long entries, and a 16-bit filter of its hashes. */
function windowsOf(
  entries: readonly Entry[],
): { table: Map<number, Window[]>; filter: Uint8Array } {
  const table = new Map<number, Window[]>();
  const filter = new Uint8Array(0x10000);
  for (const entry of entries) {
    if (entry.value.length < FRAGMENT_SECRET_LENGTH) continue;
    for (let offset = 0; offset + FRAGMENT_LENGTH <= entry.value.length; offset++) {
      const h = windowHash(entry.value, offset);
      const list = table.get(h);
      if (list) list.push({ entry, offset });
      else table.set(h, [{ entry, offset }]);
      filter[h & 0xffff] = 1;
    }
  }
  return { table, filter };
}

/** What starts at a position: a decided match, nothing, or not yet known. */
type Found = { entry: Entry; length: number } | "none" | "undecided";

/** Start a masker for `secrets`. */
export function createSecretMasker(secrets: readonly Secret[]): SecretMasker {
  // Long because: one closure-based masker whose scan (a rolling hash over the text), its
  // per-position decision and the held-back tail share the pending text and the tables.
  const entries = entriesOf(secrets);
  const long = entries.filter((e) => e.value.length >= FRAGMENT_SECRET_LENGTH);
  const short = entries.filter((e) => e.value.length < FRAGMENT_SECRET_LENGTH);
  const { table, filter } = windowsOf(long);
  const shortByFirst = new Map<number, Entry[]>();
  for (const e of short) {
    const c = e.value.charCodeAt(0);
    const list = shortByFirst.get(c);
    if (list) list.push(e);
    else shortByFirst.set(c, [e]);
  }
  let pending = "";

  /**
   * What starts at `p` of `text`, whose window hash is `h` (when a whole
   * window fits). Not final: a match that reaches the end of the text, or a
   * tail that could still begin one, is undecided.
   */
  const foundAt = (text: string, p: number, h: number, final: boolean): Found => {
    const rest = text.length - p;
    let best: { entry: Entry; length: number } | undefined;
    let undecided = false;
    const offer = (entry: Entry, length: number) => {
      if (best === undefined || length > best.length) best = { entry, length };
    };
    if (rest >= FRAGMENT_LENGTH) {
      if (filter[h & 0xffff] === 1) {
        for (const w of table.get(h) ?? []) {
          const v = w.entry.value;
          let k = 0;
          while (k < FRAGMENT_LENGTH && text.charCodeAt(p + k) === v.charCodeAt(w.offset + k)) k++;
          if (k < FRAGMENT_LENGTH) continue; // a hash collision
          while (p + k < text.length && w.offset + k < v.length) {
            if (text.charCodeAt(p + k) !== v.charCodeAt(w.offset + k)) break;
            k++;
          }
          // Ran out of text while the secret goes on: more text may make it longer.
          if (!final && p + k === text.length && w.offset + k < v.length) undecided = true;
          offer(w.entry, k);
        }
      }
    } else if (!final && long.length > 0) {
      // Too short for a window: undecided when it could be the start of one.
      const tail = text.slice(p);
      for (const e of long) {
        const i = e.value.indexOf(tail);
        if (i >= 0 && i + FRAGMENT_LENGTH <= e.value.length) {
          undecided = true;
          break;
        }
      }
    }
    for (const e of shortByFirst.get(text.charCodeAt(p)) ?? []) {
      if (text.startsWith(e.value, p)) offer(e, e.value.length);
      else if (!final && rest < e.value.length && e.value.startsWith(text.slice(p))) {
        undecided = true;
      }
    }
    if (undecided) return "undecided";
    return best ?? "none";
  };

  const run = (text: string, final: boolean): string => {
    let out = "";
    let pos = 0; // text before pos is out
    let p = 0;
    let h = text.length >= FRAGMENT_LENGTH ? windowHash(text, 0) : 0;
    while (p < text.length) {
      const found = foundAt(text, p, h, final);
      if (found === "undecided") {
        pending = text.slice(p);
        return out + text.slice(pos, p);
      }
      if (found !== "none") {
        out += text.slice(pos, p) + found.entry.marker;
        p = pos = p + found.length;
        if (p + FRAGMENT_LENGTH <= text.length) h = windowHash(text, p);
        continue;
      }
      if (p + FRAGMENT_LENGTH < text.length) {
        h = (Math.imul(h - Math.imul(text.charCodeAt(p), HASH_LEAD), HASH_BASE) +
          text.charCodeAt(p + FRAGMENT_LENGTH)) | 0;
      }
      p++;
    }
    pending = "";
    return out + text.slice(pos);
  };

  return {
    push(text: string): string {
      if (entries.length === 0 || text.length === 0) return text;
      return run(pending + text, false);
    },
    flush(): string {
      if (pending === "") return "";
      const rest = pending;
      pending = "";
      return run(rest, true);
    },
    get held() {
      return pending.length;
    },
    get active() {
      return entries.length > 0;
    },
  };
}

/** `text` with every secret (and every long enough piece of a long one) replaced by its marker. */
export function maskSecrets(text: string, secrets: readonly Secret[]): string {
  const masker = createSecretMasker(secrets);
  if (!masker.active) return text;
  return masker.push(text) + masker.flush();
}
