/**
 * Redaction of secret-shaped values in exported traces. Each match becomes a
 * visible marker `[redacted:<kind>]`; for bearer tokens and passwords in URLs
 * only the secret part is replaced (`Bearer [redacted:bearer_token]`,
 * `https://user:[redacted:url_password]@host`). The markers contain no quote
 * or backslash, so a redacted JSON string (tool arguments) stays valid JSON.
 *
 * Redaction always runs on whole texts, before anything is cut: a secret cut
 * in half no longer matches its pattern, so its prefix would survive.
 * {@linkcode redactConversation} therefore rebuilds the cut tool-call
 * previews from the redacted arguments.
 *
 * @module
 */
import { type Conversation, type ConvItem, toolPreview } from "./conversation.ts";

/** The kinds of secret recognised. */
export type SecretKind =
  | "private_key"
  | "anthropic_key"
  | "openai_key"
  | "google_api_key"
  | "github_token"
  | "slack_token"
  | "aws_access_key"
  | "bearer_token"
  | "url_password";

interface Rule {
  kind: SecretKind;
  re: RegExp;
  /** Groups kept before the marker (prefix) and after it (suffix). */
  keep?: (m: RegExpExecArray) => [string, string];
}

const RULES: Rule[] = [
  {
    // A PEM private key block; an unterminated one runs to the end of the text (or a quote).
    kind: "private_key",
    re:
      /-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY-----|(?="|$))/g,
  },
  { kind: "anthropic_key", re: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{16,}/g },
  {
    // OpenAI-style keys (sk-…, sk-proj-…): 20+ key characters including a digit.
    kind: "openai_key",
    re: /(?<![A-Za-z0-9_-])sk-(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}/g,
  },
  { kind: "google_api_key", re: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}/g },
  {
    kind: "github_token",
    re: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})/g,
  },
  { kind: "slack_token", re: /(?<![A-Za-z0-9])xox[abposre]-[A-Za-z0-9-]{10,}/g },
  { kind: "aws_access_key", re: /(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])/g },
  {
    kind: "bearer_token",
    re: /\b([Bb]earer|BEARER)(\s+)[A-Za-z0-9._~+/=-]{12,}/g,
    keep: (m) => [`${m[1]}${m[2]}`, ""],
  },
  {
    kind: "url_password",
    re: /\b([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^\s:/?#@"'<>\\]+):([^\s/?#@"'<>\\]+)@/g,
    keep: (m) => [`${m[1]}${m[2]}:`, "@"],
  },
];

/** The marker that replaces a secret of `kind`. */
export function redactionMarker(kind: SecretKind): string {
  return `[redacted:${kind}]`;
}

// Cheap pre-filter: a text without any of these substrings has nothing to redact.
const HINTS = /PRIVATE KEY|sk-|AIza|gh[pousr]_|github_pat_|xox|AKIA|ASIA|earer|EARER|:\/\//;

/** Replace every secret-shaped value in `text` (see the module doc). */
export function redactSecrets(text: string): string {
  if (!HINTS.test(text)) return text;
  let out = text;
  for (const rule of RULES) {
    rule.re.lastIndex = 0;
    out = out.replace(rule.re, (...args) => {
      const marker = redactionMarker(rule.kind);
      if (!rule.keep) return marker;
      const m = args.slice(0, -2) as unknown as RegExpExecArray;
      // A secret redacted by an earlier rule stays as it is.
      if (/^\[redacted:[a-z_]+\]$/.test(m[3] ?? "")) return m[0];
      const [pre, post] = rule.keep(m);
      return `${pre}${marker}${post}`;
    });
  }
  return out;
}

// Base64 image data is left alone.
const DATA_URL = /^data:[a-z]+\/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=]*$/;

/** A deep copy of `value` with {@linkcode redactSecrets} applied to every string (keys kept). */
export function redactDeep<T>(value: T): T {
  if (typeof value === "string") {
    return (DATA_URL.test(value) ? value : redactSecrets(value)) as T;
  }
  if (Array.isArray(value)) return value.map((v) => redactDeep(v)) as T;
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v);
    return out as T;
  }
  return value;
}

/**
 * A redacted copy of a conversation (and of its subagents'): every string
 * through {@linkcode redactDeep}, then each tool-call preview rebuilt from the
 * redacted arguments, so the 120-char cut never lands inside a secret.
 */
export function redactConversation(conv: Conversation): Conversation {
  const out = redactDeep(conv);
  const previews = (c: Conversation) => {
    for (const it of c.items) {
      if (it.kind === "tool_call") it.preview = toolPreview(it.name, it.arguments);
    }
    for (const child of c.subagents ?? []) previews(child);
  };
  previews(out);
  return out;
}

/** A redacted copy of one timeline item (a tool call's preview rebuilt), as {@linkcode redactConversation} does. */
export function redactItem(item: ConvItem): ConvItem {
  const out = redactDeep(item);
  if (out.kind === "tool_call") out.preview = toolPreview(out.name, out.arguments);
  return out;
}
