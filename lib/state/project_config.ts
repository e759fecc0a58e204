/**
 * `.project_config.toml`: the project's model table, credentials, chat
 * defaults and command policy. Written atomically with mode
 * 0600 (re-applied on every save). A malformed file is never overwritten:
 * every write loads first, and a load error stops the write.
 *
 * @module
 */
import { dirname } from "node:path";
import { PenguinError } from "../protocol/errors.ts";
import { mkdirPrivate, readTextIfExists, writeFileAtomic } from "./_fs.ts";
import { parseProjectConfig } from "./_project_config_parse.ts";
import { factoryCommandPolicyRules } from "./command_policy_defaults.ts";
import type { ModelEntry, ModelPricing, ModelRef, ProjectConfig } from "./project_config_types.ts";

export * from "./project_config_types.ts";
export { parseProjectConfig };

/**
 * The config of a project that has no file yet: no models, no default,
 * the factory command-policy rules. Not written until something is saved.
 */
export function defaultProjectConfig(): ProjectConfig {
  return {
    default_chat: {},
    command_policy: { enabled: true, rules: factoryCommandPolicyRules() },
    models: [],
    extra: {},
  };
}

/** Load the file at `path`; a missing file gives {@linkcode defaultProjectConfig}. */
export async function loadProjectConfig(path: string): Promise<ProjectConfig> {
  const text = await readTextIfExists(path);
  if (text === undefined) return defaultProjectConfig();
  return parseProjectConfig(text, path);
}

/**
 * Write `cfg` to `path` atomically with mode 0600, creating parent dirs
 * (0700). An existing file is edited in place where it differs (see
 * `_project_config_splice.ts`): what penguin did not change stays as read.
 */
export async function saveProjectConfig(path: string, cfg: ProjectConfig): Promise<void> {
  await mkdirPrivate(dirname(path));
  await writeFileAtomic(path, await nextText(path, cfg), 0o600);
}

/**
 * The new file text: the current text spliced, or a full render when that cannot be done. The
 * splicer and renderer load with the first write: a command that only reads does not load them.
 */
async function nextText(path: string, cfg: ProjectConfig): Promise<string> {
  const [{ renderProjectConfig }, { spliceProjectConfig }] = await Promise.all([
    import("./_project_config_render.ts"),
    import("./_project_config_splice.ts"),
  ]);
  const text = await readTextIfExists(path);
  if (text !== undefined) {
    let before: ProjectConfig | undefined;
    try {
      before = parseProjectConfig(text, path);
    } catch {
      before = undefined;
    }
    const spliced = before ? spliceProjectConfig(text, before, cfg, path) : undefined;
    if (spliced !== undefined) return spliced;
  }
  return renderProjectConfig(cfg);
}

/**
 * Load, let `change` edit the config in place, then save — unless `change`
 * returns `false`. Resolves to `change`'s result. A load error aborts with
 * the file untouched.
 */
export async function updateProjectConfig<T>(
  path: string,
  change: (cfg: ProjectConfig) => T,
): Promise<T> {
  const cfg = await loadProjectConfig(path);
  const result = change(cfg);
  if (result !== false) await saveProjectConfig(path, cfg);
  return result;
}

/** True when `a` and `b` name the same pair. */
export function samePair(a: ModelRef, b: ModelRef): boolean {
  return a.provider === b.provider && a.model_id === b.model_id;
}

/** Render a pair for messages: `(provider, model_id)`. */
export function formatPair(ref: ModelRef): string {
  return `(${ref.provider}, ${ref.model_id})`;
}

/** The configured entry for `ref`, if any. */
export function findModel(cfg: ProjectConfig, ref: ModelRef): ModelEntry | undefined {
  return cfg.models.find((m) => samePair(m, ref));
}

/** "configured models: (a, b), (c, d)" or "no models are configured", for error messages. */
export function describeConfiguredPairs(cfg: ProjectConfig): string {
  if (cfg.models.length === 0) return "no models are configured";
  return `configured models: ${cfg.models.map(formatPair).join(", ")}`;
}

/** The error for a pair that is not in the model table. */
export function unknownPairError(cfg: ProjectConfig, ref: ModelRef, file: string): PenguinError {
  return new PenguinError(
    "not_found",
    `No model ${formatPair(ref)} in ${JSON.stringify(file)}; ${describeConfiguredPairs(cfg)}. ` +
      `Add it with: penguin config model add --provider ${ref.provider} --model-id ${ref.model_id}`,
  );
}

/**
 * What {@linkcode upsertModel} may set, as in a {@linkcode ModelEntry}.
 * Absent fields keep their value; `""` removes `api_key`, `base_url` and
 * `display_name`, `false` clears `fast_mode`; `client_type` is stored
 * verbatim (callers pass PenguinHarness's spelling).
 */
export interface ModelInput extends
  ModelRef,
  Pick<
    ModelEntry,
    | "api_key"
    | "base_url"
    | "context_window"
    | "max_tokens"
    | "client_type"
    | "display_name"
    | "vision"
    | "fast_mode"
  > {
  /** Prices per bucket; buckets merge one by one, missing ones become 0. */
  pricing?: Partial<Omit<ModelPricing, "unit">>;
}

/**
 * Insert or update the entry for `input`'s pair in `cfg` (in memory).
 * Writing an api_key stamps `created_at`. Returns whether it was new.
 */
export function upsertModel(
  cfg: ProjectConfig,
  input: ModelInput,
  now: Date = new Date(),
): { created: boolean; entry: ModelEntry } {
  let entry = findModel(cfg, input);
  const created = entry === undefined;
  if (!entry) {
    entry = { provider: input.provider, model_id: input.model_id };
    cfg.models.push(entry);
  }
  for (const k of ["api_key", "base_url", "display_name"] as const) {
    const v = input[k];
    if (v === undefined) continue;
    if (v === "") delete entry[k];
    else entry[k] = v;
  }
  if (input.api_key !== undefined && input.api_key !== "") entry.created_at = now.toISOString();
  if (input.api_key === "") delete entry.created_at;
  if (input.context_window !== undefined) entry.context_window = input.context_window;
  if (input.max_tokens !== undefined) entry.max_tokens = input.max_tokens;
  if (input.client_type !== undefined) entry.client_type = input.client_type;
  if (input.vision !== undefined) entry.vision = input.vision;
  if (input.fast_mode === true) entry.fast_mode = true;
  if (input.fast_mode === false) delete entry.fast_mode;
  if (input.pricing) {
    const old = entry.pricing;
    entry.pricing = {
      unit: "usd_per_mtok",
      cache_read: input.pricing.cache_read ?? old?.cache_read ?? 0,
      cache_write: input.pricing.cache_write ?? old?.cache_write ?? 0,
      output: input.pricing.output ?? old?.output ?? 0,
    };
  }
  return { created, entry };
}

/**
 * Remove the entry for `ref` from `cfg` (in memory), clearing
 * `default_model` / `vision_model` when they named it. Idempotent.
 */
export function deleteModel(
  cfg: ProjectConfig,
  ref: ModelRef,
): { removed: boolean; clearedDefault: boolean; clearedVision: boolean } {
  const before = cfg.models.length;
  cfg.models = cfg.models.filter((m) => !samePair(m, ref));
  const clearedDefault = cfg.default_model !== undefined && samePair(cfg.default_model, ref);
  const clearedVision = cfg.vision_model !== undefined && samePair(cfg.vision_model, ref);
  if (clearedDefault) delete cfg.default_model;
  if (clearedVision) delete cfg.vision_model;
  return { removed: cfg.models.length !== before, clearedDefault, clearedVision };
}

/** Result of {@linkcode addModel}. */
export interface AddModelResult {
  /** True when the pair was new. */
  created: boolean;
  /** The entry as saved. */
  entry: ModelEntry;
  /** The whole config as saved. */
  config: ProjectConfig;
}

/** Upsert a model entry in the file at `path`; `setDefault` also points `default_model` at it. */
export async function addModel(
  path: string,
  input: ModelInput,
  opts: { setDefault?: boolean } = {},
): Promise<AddModelResult> {
  const cfg = await loadProjectConfig(path);
  const { created, entry } = upsertModel(cfg, input);
  if (opts.setDefault) cfg.default_model = { provider: input.provider, model_id: input.model_id };
  await saveProjectConfig(path, cfg);
  return { created, entry, config: cfg };
}

/**
 * Remove a model entry from the file at `path`. Idempotent: a missing pair
 * (or a missing file) changes nothing and reports `removed: false`.
 */
export async function removeModel(
  path: string,
  ref: ModelRef,
): Promise<{ removed: boolean; clearedDefault: boolean; clearedVision: boolean }> {
  const text = await readTextIfExists(path);
  if (text === undefined) return { removed: false, clearedDefault: false, clearedVision: false };
  const cfg = parseProjectConfig(text, path);
  const result = deleteModel(cfg, ref);
  if (result.removed || result.clearedDefault || result.clearedVision) {
    await saveProjectConfig(path, cfg);
  }
  return result;
}

/** Point `default_model` at `ref`, which must be configured. */
export async function setDefaultModel(path: string, ref: ModelRef): Promise<ProjectConfig> {
  const cfg = await loadProjectConfig(path);
  if (!findModel(cfg, ref)) throw unknownPairError(cfg, ref, path);
  cfg.default_model = { provider: ref.provider, model_id: ref.model_id };
  await saveProjectConfig(path, cfg);
  return cfg;
}

/** Point `vision_model` at `ref`, which must be configured and not `vision = false`. */
export async function setVisionModel(path: string, ref: ModelRef): Promise<ProjectConfig> {
  const cfg = await loadProjectConfig(path);
  const entry = findModel(cfg, ref);
  if (!entry) throw unknownPairError(cfg, ref, path);
  if (entry.vision === false) {
    throw new PenguinError(
      "config",
      `Model ${formatPair(ref)} has vision = false in ${
        JSON.stringify(path)
      }, so it cannot describe images; ` +
        `pick a model that accepts images`,
    );
  }
  cfg.vision_model = { provider: ref.provider, model_id: ref.model_id };
  await saveProjectConfig(path, cfg);
  return cfg;
}
