/**
 * Secret values in the files a snapshot packs. The model writes the
 * agent's memory (and the user its notes, skills, `AGENTS.md`…), so any
 * file of `agent_state/` may hold a vault value or an API key. Every file
 * is read through the caller's mask (lib/agent/snapshot_secrets.ts: the
 * same masker as the trace views, `[redacted:vault:<KEY>]`):
 *
 * - a text file (valid UTF-8) is packed masked, and named in the report
 *   with the markers written;
 * - a binary file is not changed (masking would break it): it is searched,
 *   read as UTF-8 and as Latin-1, and when it holds a secret value (or a
 *   long enough piece of one) it is left out and reported;
 * - an entry whose name holds a secret value is left out (the report shows
 *   the name masked).
 *
 * @module
 */

/** The mask applied to a snapshot's text: every known secret value replaced by its marker. */
export type TextMask = (text: string) => string;

/** What becomes of one file's bytes. */
export type MaskedFile =
  | { kind: "same" }
  | { kind: "masked"; body: Uint8Array; markers: string[] }
  | { kind: "left_out"; reason: string };

const MARKER = /\[redacted:[a-z_]+:[^\]\s]*\]/g;

/** The markers in `masked` that `before` does not hold, once each. */
function newMarkers(before: string, masked: string): string[] {
  const had = new Set(before.match(MARKER) ?? []);
  return [...new Set(masked.match(MARKER) ?? [])].filter((m) => !had.has(m));
}

/** True when `mask` changes `text`. */
function holdsSecret(text: string, mask: TextMask): boolean {
  return mask(text) !== text;
}

/** What to pack of `bytes`, a file of the snapshot. */
export function maskFile(bytes: Uint8Array, mask: TextMask): MaskedFile {
  let text: string | undefined;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    text = undefined;
  }
  if (text !== undefined) {
    const masked = mask(text);
    if (masked === text) return { kind: "same" };
    return {
      kind: "masked",
      body: new TextEncoder().encode(masked),
      markers: newMarkers(text, masked),
    };
  }
  const lenient = new TextDecoder("utf-8").decode(bytes);
  const latin1 = new TextDecoder("latin1").decode(bytes);
  if (holdsSecret(lenient, mask) || holdsSecret(latin1, mask)) {
    return {
      kind: "left_out",
      reason: "a binary file holding a secret value (binary files are left out, not masked)",
    };
  }
  return { kind: "same" };
}

/** Why an entry named `name` is left out, or undefined when its name holds no secret. */
export function secretInName(name: string, mask: TextMask): string | undefined {
  return holdsSecret(name, mask) ? "its name holds a secret value" : undefined;
}
