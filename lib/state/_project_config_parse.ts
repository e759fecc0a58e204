/**
 * Parsing and validation of `.project_config.toml` text.
 *
 * @module
 */
import { z } from "zod";
import { parseTomlText, schemaError, tomlLocator, zodProblems } from "./_config_errors.ts";
import type { CommandPolicyRule } from "./command_policy_defaults.ts";
import {
  type ApprovalMode,
  type ChatThinkingLevel,
  type CommandPolicy,
  type DefaultChat,
  type ModelEntry,
  type ProjectConfig,
} from "./project_config_types.ts";
import { NAME_ID_PATTERN } from "./ids.ts";

const NON_EMPTY = "expected a non-empty string";
const nonEmpty = z.string({ error: NON_EMPTY }).refine((s) => s.trim() !== "", {
  error: NON_EMPTY,
});
const optString = z.string({ error: "expected a string" }).optional();
const price = z.number({ error: "expected a non-negative number" })
  .refine((n) => Number.isFinite(n) && n >= 0, { error: "expected a non-negative number" })
  .optional();

const modelRef = z.object({ provider: nonEmpty, model_id: nonEmpty }, {
  error: 'expected an inline table { provider = "…", model_id = "…" }',
});

const pricing = z.looseObject({
  unit: z.literal("usd_per_mtok", { error: 'expected "usd_per_mtok"' }).optional(),
  cache_read: price,
  cache_write: price,
  output: price,
}, { error: "expected a table with cache_read, cache_write and output" });

/** Any string: routing is decided per model when it is used, so one unknown value breaks nothing else. */
const clientType = z.string({ error: "expected a string" });

const dateOrString = z.preprocess(
  (v) => (v instanceof Date ? v.toISOString() : v),
  z.string({ error: "expected a string (ISO time)" }),
);

const entry = z.looseObject({
  provider: nonEmpty,
  model_id: nonEmpty,
  context_window: z.number({ error: "expected an integer" }).int({ error: "expected an integer" })
    .nonnegative({ error: "expected a non-negative integer" }).optional(),
  max_tokens: z.number({ error: "expected an integer" }).int({ error: "expected an integer" })
    .optional(),
  client_type: clientType.optional(),
  display_name: optString,
  vision: z.boolean({ error: "expected true or false" }).optional(),
  fast_mode: z.boolean({ error: "expected true or false" }).optional(),
  pricing: pricing.optional(),
  api_key: optString,
  base_url: optString,
  created_at: dateOrString.optional(),
}, { error: "expected a [[models]] table" });

const top = z.looseObject({
  name: optString,
  default_model: modelRef.optional(),
  vision_model: modelRef.optional(),
  models: z.array(entry, { error: "expected an array of [[models]] tables" }).optional(),
});

const KNOWN_TOP = new Set([
  "name",
  "default_model",
  "vision_model",
  "default_chat",
  "command_policy",
  "models",
]);
const KNOWN_ENTRY = new Set([
  "provider",
  "model_id",
  "context_window",
  "max_tokens",
  "client_type",
  "display_name",
  "vision",
  "fast_mode",
  "pricing",
  "api_key",
  "base_url",
  "created_at",
]);
const APPROVAL_MODES: readonly ApprovalMode[] = [
  "allow-all",
  "deny-all",
  "read-only",
  "always-ask",
];
const CHAT_LEVELS: readonly ChatThinkingLevel[] = ["low", "medium", "high", "xhigh", "max"];

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** `[default_chat]`, each key on its own: a bad value drops only that key. */
function parseDefaultChat(raw: unknown): DefaultChat {
  const out: DefaultChat = {};
  if (!isTable(raw)) return out;
  if (typeof raw.agent_id === "string" && NAME_ID_PATTERN.test(raw.agent_id)) {
    out.agent_id = raw.agent_id;
  }
  if (typeof raw.workspace === "string" && raw.workspace !== "") out.workspace = raw.workspace;
  const mode = typeof raw.approval_mode === "string" ? raw.approval_mode.toLowerCase() : undefined;
  if (mode && (APPROVAL_MODES as readonly string[]).includes(mode)) {
    out.approval_mode = mode as ApprovalMode;
  }
  const level = typeof raw.thinking_level === "string"
    ? raw.thinking_level.toLowerCase()
    : undefined;
  if (level && (CHAT_LEVELS as readonly string[]).includes(level)) {
    out.thinking_level = level as ChatThinkingLevel;
  }
  return out;
}

/** Why `pattern` is not a JS regular expression (V8's detail), or undefined when it is one. */
function regexProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern);
    return undefined;
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    return /^Invalid regular expression: \/.*\/[a-z]*: (.*)$/s.exec(msg)?.[1] ?? msg;
  }
}

/**
 * `[command_policy]`: entries without a name or pattern are dropped one by
 * one, but a pattern that is not a valid JS regex is a config error (a
 * dropped rule would silently stop guarding).
 */
function parseCommandPolicy(raw: unknown, file: string, text: string): CommandPolicy {
  if (!isTable(raw)) return { enabled: true };
  const policy: CommandPolicy = { enabled: raw.enabled !== false };
  if (Array.isArray(raw.rules)) {
    const rules: CommandPolicyRule[] = [];
    for (const [i, r] of raw.rules.entries()) {
      if (!isTable(r) || typeof r.name !== "string" || r.name === "") continue;
      if (typeof r.pattern !== "string" || r.pattern === "") continue;
      const problem = regexProblem(r.pattern);
      if (problem !== undefined) {
        throw schemaError(file, [{
          path: ["command_policy", "rules", i, "pattern"],
          message: `rule ${JSON.stringify(r.name)} has an invalid regular expression ${
            JSON.stringify(r.pattern)
          } (${problem}); fix the pattern or remove the rule`,
        }], tomlLocator(text));
      }
      const rule: CommandPolicyRule = { name: r.name, pattern: r.pattern };
      if (typeof r.description === "string") rule.description = r.description;
      if (typeof r.enabled === "boolean") rule.enabled = r.enabled;
      rules.push(rule);
    }
    policy.rules = rules;
  }
  return policy;
}

/** A deep copy with ordinary prototypes (smol-toml builds null-prototype tables). */
function plain(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(plain);
  if (isTable(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

function toEntry(raw: Record<string, unknown>): ModelEntry {
  const e: ModelEntry = { provider: raw.provider as string, model_id: raw.model_id as string };
  const num = (k: string) => (typeof raw[k] === "number" ? raw[k] as number : undefined);
  const s = (k: string) => (typeof raw[k] === "string" ? raw[k] as string : undefined);
  const cw = num("context_window");
  if (cw !== undefined) e.context_window = cw;
  const mt = num("max_tokens");
  if (mt !== undefined) e.max_tokens = mt;
  for (const k of ["client_type", "display_name", "api_key", "base_url", "created_at"] as const) {
    const v = s(k);
    if (v !== undefined) e[k] = v;
  }
  if (typeof raw.vision === "boolean") e.vision = raw.vision;
  if (raw.fast_mode === true) e.fast_mode = true;
  if (isTable(raw.pricing)) {
    const p = raw.pricing;
    const n = (k: string) => (typeof p[k] === "number" ? p[k] as number : 0);
    e.pricing = {
      unit: "usd_per_mtok",
      cache_read: n("cache_read"),
      cache_write: n("cache_write"),
      output: n("output"),
    };
  }
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) if (!KNOWN_ENTRY.has(k)) extra[k] = plain(v);
  if (Object.keys(extra).length > 0) e.extra = extra;
  return e;
}

/**
 * Parse and validate `.project_config.toml` text. `file` names the file in
 * errors. Throws a config error with the line for syntax and shape errors.
 */
export function parseProjectConfig(text: string, file: string): ProjectConfig {
  const raw = parseTomlText(text, file);
  const result = top.safeParse(raw, { reportInput: true });
  if (!result.success) throw schemaError(file, zodProblems(result.error.issues), tomlLocator(text));
  const data = result.data as Record<string, unknown>;
  const models = ((data.models ?? []) as Record<string, unknown>[]).map(toEntry);
  const seen = new Map<string, number>();
  for (const [i, m] of models.entries()) {
    const key = JSON.stringify([m.provider, m.model_id]);
    const first = seen.get(key);
    if (first !== undefined) {
      throw schemaError(file, [{
        path: ["models", i],
        message:
          `duplicate model (${m.provider}, ${m.model_id}); already defined at models[${first}]`,
      }], tomlLocator(text));
    }
    seen.set(key, i);
  }
  const cfg: ProjectConfig = {
    default_chat: parseDefaultChat(raw.default_chat),
    command_policy: parseCommandPolicy(raw.command_policy, file, text),
    models,
    extra: {},
  };
  if (typeof data.name === "string") cfg.name = data.name;
  for (const k of ["default_model", "vision_model"] as const) {
    const ref = data[k] as { provider: string; model_id: string } | undefined;
    if (ref) cfg[k] = { provider: ref.provider, model_id: ref.model_id };
  }
  for (const [k, v] of Object.entries(raw)) if (!KNOWN_TOP.has(k)) cfg.extra[k] = plain(v);
  return cfg;
}
