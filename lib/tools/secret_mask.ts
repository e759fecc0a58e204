/**
 * Masking of known secret values in tool output. A session knows its secrets
 * exactly (the agent's vault values and the configured API keys), so every
 * occurrence of one is replaced by a marker before the text is recorded,
 * rendered or sent to the model:
 *
 * - a vault value becomes `[redacted:vault:<KEY>]` (the vault key);
 * - an API key becomes `[redacted:api_key:<NAME>]`, where NAME is the env var
 *   it is read from (`OPENAI_API_KEY`) or, for a key stored inline in a model
 *   entry of `.project_config.toml` (or given with `--api-key`), the provider
 *   group of that entry (`openai`).
 *
 * Values shorter than {@linkcode MIN_SECRET_LENGTH} characters are not
 * masked: masking `1234` or `a` would destroy ordinary output and hide
 * nothing an attacker could not guess. The masker is streaming: a value
 * split across chunks is still found, and the text held back between chunks
 * is only a tail that could still become a secret (at most the longest
 * secret's length minus one). Matching is leftmost first, longest first at
 * equal positions; the concatenation of what `push` and `flush` return
 * equals {@linkcode maskSecrets} of the whole text.
 *
 * @module
 */

/** Shortest value that is masked; shorter ones are left alone. */
export const MIN_SECRET_LENGTH = 6;

/** Where a secret comes from. */
export type SecretKind = "vault" | "api_key";

/** One secret value and the name its marker shows. */
export interface Secret {
  /** `vault` or `api_key`. */
  kind: SecretKind;
  /** Vault key, env var name or provider group (never the value). */
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
  return out.sort((a, b) => b.value.length - a.value.length);
}

/** Start a masker for `secrets`. */
export function createSecretMasker(secrets: readonly Secret[]): SecretMasker {
  // Long because: one closure-based masker whose two loops (find the next secret, hold back a
  // possible prefix) share the pending text and the entries.
  const entries = entriesOf(secrets);
  const maxLen = entries.length > 0 ? entries[0]!.value.length : 0;
  let pending = "";

  /**
   * The earliest full match at or after `from` (longest first on a tie), or
   * undefined. `next[i]` caches where entry i occurs next in `text`
   * (-1: nowhere), so each scan of a chunk is linear per secret.
   */
  const nextMatch = (
    text: string,
    from: number,
    next: number[],
  ): { at: number; e: Entry } | undefined => {
    let best: { at: number; e: Entry } | undefined;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      let at = next[i]!;
      if (at !== -1 && at < from) at = next[i] = text.indexOf(e.value, from);
      if (at >= 0 && (best === undefined || at < best.at)) best = { at, e };
    }
    return best;
  };

  /** The earliest position >= `from` whose rest of `text` is a proper prefix of a secret, else text.length. */
  const undecidedFrom = (text: string, from: number): number => {
    let earliest = text.length;
    for (const e of entries) {
      const v = e.value;
      let p = Math.max(from, text.length - (v.length - 1));
      while (p < earliest) {
        p = text.indexOf(v[0]!, p);
        if (p < 0 || p >= earliest) break;
        if (text.startsWith(v.slice(0, text.length - p), p)) {
          earliest = p;
          break;
        }
        p++;
      }
    }
    return earliest;
  };

  const run = (text: string, final: boolean): string => {
    let out = "";
    let pos = 0;
    const next = entries.map(() => -2); // -2: not looked up yet (any value < pos forces a lookup)
    let hold = -1;
    for (;;) {
      const m = nextMatch(text, pos, next);
      // The earliest undecided position only moves when a match swallowed it.
      if (hold < pos) hold = final ? text.length : undecidedFrom(text, pos);
      if (m !== undefined && m.at < hold) {
        out += text.slice(pos, m.at) + m.e.marker;
        pos = m.at + m.e.value.length;
        continue;
      }
      out += text.slice(pos, hold);
      pending = text.slice(hold);
      return out;
    }
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
      return maxLen > 0;
    },
  };
}

/** `text` with every secret replaced by its marker. */
export function maskSecrets(text: string, secrets: readonly Secret[]): string {
  const masker = createSecretMasker(secrets);
  if (!masker.active) return text;
  return masker.push(text) + masker.flush();
}
