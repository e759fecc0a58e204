/**
 * The single renderer of `.project_config.toml`: top-level `key = value`
 * lines first (model pairs as inline tables), then tables (`[default_chat]`,
 * `[command_policy]`, unknown tables), then `[[models]]` last.
 *
 * @module
 */
import { stringify } from "smol-toml";
import type { ModelEntry, ModelRef, ProjectConfig } from "./project_config_types.ts";

/** A TOML value literal, e.g. `"a\"b"` or `1.5`. */
function literal(value: unknown): string {
  return stringify({ v: value }).replace(/^v = /, "").trimEnd();
}

function inlineRef(ref: ModelRef): string {
  return `{ provider = ${literal(ref.provider)}, model_id = ${literal(ref.model_id)} }`;
}

/** True for values that must be written as a `[table]` or `[[array of tables]]`. */
function isTableValue(v: unknown): boolean {
  if (Array.isArray(v)) {
    return v.length > 0 &&
      v.every((x) => typeof x === "object" && x !== null && !(x instanceof Date));
  }
  return typeof v === "object" && v !== null && !(v instanceof Date);
}

function block(obj: Record<string, unknown>): string {
  return Object.keys(obj).length === 0 ? "" : stringify(obj).trim();
}

function entryObject(m: ModelEntry): Record<string, unknown> {
  const o: Record<string, unknown> = { provider: m.provider, model_id: m.model_id };
  if (m.display_name !== undefined) o.display_name = m.display_name;
  if (m.client_type !== undefined) o.client_type = m.client_type;
  if (m.base_url !== undefined) o.base_url = m.base_url;
  if (m.api_key !== undefined) o.api_key = m.api_key;
  if (m.created_at !== undefined) o.created_at = m.created_at;
  if (m.context_window !== undefined) o.context_window = m.context_window;
  if (m.max_tokens !== undefined) o.max_tokens = m.max_tokens;
  if (m.vision !== undefined) o.vision = m.vision;
  if (m.fast_mode === true) o.fast_mode = true;
  for (const [k, v] of Object.entries(m.extra ?? {})) if (!(k in o) && k !== "pricing") o[k] = v;
  if (m.pricing) {
    o.pricing = {
      unit: "usd_per_mtok",
      cache_read: m.pricing.cache_read,
      cache_write: m.pricing.cache_write,
      output: m.pricing.output,
    };
  }
  return o;
}

/** One `[[models]]` block (with its `[models.pricing]`), ending in a newline. */
export function renderModelEntry(m: ModelEntry): string {
  return block({ models: [entryObject(m)] }) + "\n";
}

/** Render `cfg` as TOML text in the fixed section order. */
export function renderProjectConfig(cfg: ProjectConfig): string {
  const head: string[] = [];
  if (cfg.name !== undefined) head.push(`name = ${literal(cfg.name)}`);
  if (cfg.default_model) head.push(`default_model = ${inlineRef(cfg.default_model)}`);
  if (cfg.vision_model) head.push(`vision_model = ${inlineRef(cfg.vision_model)}`);
  const extraScalars: Record<string, unknown> = {};
  const extraTables: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(cfg.extra)) {
    if (isTableValue(v)) extraTables[k] = v;
    else extraScalars[k] = v;
  }
  const scalars = block(extraScalars);
  if (scalars) head.push(scalars);

  const sections: string[] = [];
  if (head.length > 0) sections.push(head.join("\n"));
  const chat = Object.fromEntries(
    Object.entries(cfg.default_chat).filter(([, v]) => v !== undefined),
  );
  if (Object.keys(chat).length > 0) sections.push(block({ default_chat: chat }));
  const policy: Record<string, unknown> = {};
  if (!cfg.command_policy.enabled) policy.enabled = false;
  if (cfg.command_policy.rules) {
    policy.rules = cfg.command_policy.rules.map((r) => {
      const o: Record<string, unknown> = { name: r.name, pattern: r.pattern };
      if (r.description !== undefined) o.description = r.description;
      if (r.enabled !== undefined) o.enabled = r.enabled;
      return o;
    });
  }
  if (Object.keys(policy).length > 0) sections.push(block({ command_policy: policy }));
  const tables = block(extraTables);
  if (tables) sections.push(tables);
  if (cfg.models.length > 0) sections.push(block({ models: cfg.models.map(entryObject) }));
  return sections.length === 0 ? "" : sections.join("\n\n") + "\n";
}
