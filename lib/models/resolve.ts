/**
 * From an explicit `(provider, model_id)` pair (or the project default) to a
 * {@linkcode ModelEndpoint}. The pair must be configured in the project; the
 * provider is never inferred, guessed or defaulted, and nothing is routed by
 * model-id substrings. A key comes only from the entry's `api_key` or the
 * entry's own provider group's env var — never another group's.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";
import {
  describeConfiguredPairs,
  findModel,
  type ModelPricing,
  type ModelRef,
  type ProjectConfig,
  unknownPairError,
} from "../state/project_config.ts";
import { findProviderGroup, presetsOf, PROVIDER_GROUPS, recommendedPreset } from "./catalog.ts";
import { routeClientType, unroutableClientTypeMessage } from "./client_type.ts";
import type { ModelEndpoint, WireProtocol } from "./wire.ts";

/** Environment lookup: a function or a plain record. */
export type EnvSource =
  | ((name: string) => string | undefined)
  | Readonly<Record<string, string | undefined>>;

/** A model pair as given by a caller: both or neither. */
export interface ModelSelector {
  /** Provider group id. */
  provider?: string | undefined;
  /** Model id. */
  model_id?: string | undefined;
}

/** Options for {@linkcode resolveModel}. */
export interface ResolveOptions {
  /** Config file path, for messages. */
  configPath?: string;
  /** Fail when a key-requiring provider has no key (default true). */
  requireKey?: boolean;
  /**
   * Flags a `penguin config model add` line needs to reach the same project
   * (e.g. ` --root /data --project-id p`), for the first-run message.
   */
  setupFlags?: string;
}

/** A resolved model: where to send requests plus the entry's settings. */
export interface ResolvedModel {
  /** Endpoint: provider, model id, protocol, base URL, key. */
  endpoint: ModelEndpoint;
  /** Context window (only values ≥ 4096; smaller ones count as unset). */
  context_window?: number;
  /** Per-model output ceiling. */
  max_tokens?: number;
  /** Accepts images (default true). */
  vision: boolean;
  /** Fast tier requested. */
  fast_mode: boolean;
  /** Prices, USD per 1M tokens. */
  pricing?: ModelPricing;
  /** Display name. */
  display_name?: string;
  /** Where the key came from. */
  key_source: "entry" | "env" | "none";
  /** The env var consulted for the key, if the group has one. */
  key_env?: string;
}

/** Smallest context window taken at face value. */
export const MIN_CONTEXT_WINDOW = 4096;

function lookup(env: EnvSource, name: string): string | undefined {
  const v = typeof env === "function" ? env(name) : env[name];
  return v === undefined || v === "" ? undefined : v;
}

/** The process environment, where readable (a permission set may deny some names). */
function safeEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/**
 * The model to suggest on a first run: the recommended preset of the first
 * group whose key is already set, else DeepSeek's (README, "A first real task").
 */
export function firstModel(
  env: EnvSource = safeEnv,
): { provider: string; model_id: string; keyEnv?: string; keySet: boolean } {
  for (const g of PROVIDER_GROUPS) {
    if (g.api_key_env === undefined || lookup(env, g.api_key_env) === undefined) continue;
    const preset = recommendedPreset(g.id) ?? presetsOf(g.id)[0];
    if (preset) return { provider: g.id, model_id: preset.model_id, keySet: true };
  }
  const g = findProviderGroup("deepseek");
  const preset = recommendedPreset("deepseek") ?? presetsOf("deepseek")[0];
  return {
    provider: "deepseek",
    model_id: preset?.model_id ?? "deepseek-v4-flash",
    ...(g?.api_key_env !== undefined ? { keyEnv: g.api_key_env } : {}),
    keySet: false,
  };
}

/**
 * The error of a project with no model at all: the exact
 * `penguin config model add … --set-default` line to run.
 */
function firstRunError(opts: ResolveOptions, env: EnvSource): PenguinError {
  const m = firstModel(env);
  const add = `penguin config model add --provider ${m.provider} --model-id ${m.model_id} ` +
    `--set-default${opts.setupFlags ?? ""}`;
  const key = m.keyEnv !== undefined ? `and set its key: export ${m.keyEnv}=<your key>. ` : "";
  const label = findProviderGroup(m.provider)?.label ?? m.provider;
  const head = m.keySet
    ? `No model is configured yet. Add ${label}'s recommended model and make it the default:`
    : "No model is configured yet. Add one and make it the default:";
  return new PenguinError(
    "config",
    `${head}\n  ${add}\n${key}Any model of "penguin models list" works the same way.`,
  );
}

function where(opts: ResolveOptions): string {
  return opts.configPath ? ` in ${JSON.stringify(opts.configPath)}` : "";
}

/**
 * Apply the pair rules: both or neither (half → usage error); neither → the
 * project's `default_model` (unset → config error saying how to set one);
 * the pair must be configured (else an error listing the configured pairs).
 */
export function resolveModelRef(
  cfg: ProjectConfig,
  sel: ModelSelector,
  opts: ResolveOptions = {},
  env: EnvSource = safeEnv,
): ModelRef {
  const hasP = sel.provider !== undefined && sel.provider !== "";
  const hasM = sel.model_id !== undefined && sel.model_id !== "";
  if (hasP !== hasM) {
    const got = hasP
      ? `--provider ${JSON.stringify(sel.provider)} without --model-id`
      : `--model-id ${JSON.stringify(sel.model_id)} without --provider`;
    throw new PenguinError("usage", `--model-id and --provider must be given together; got ${got}`);
  }
  let ref: ModelRef;
  if (hasP && hasM) ref = { provider: sel.provider!, model_id: sel.model_id! };
  else {
    if (!cfg.default_model && cfg.models.length === 0) throw firstRunError(opts, env);
    if (!cfg.default_model) {
      throw new PenguinError(
        "config",
        `No model given and no default_model set${where(opts)}; ${describeConfiguredPairs(cfg)}. ` +
          `Pass --provider and --model-id, or set a default with: ` +
          `penguin config model default --provider ${cfg.models[0]!.provider} --model-id ${
            cfg.models[0]!.model_id
          }${opts.setupFlags ?? ""}`,
      );
    }
    ref = cfg.default_model;
  }
  if (!findModel(cfg, ref)) {
    throw unknownPairError(cfg, ref, opts.configPath ?? ".project_config.toml");
  }
  return { provider: ref.provider, model_id: ref.model_id };
}

/**
 * The wire protocol of an entry: its `client_type` routed as PenguinHarness's
 * gateway would, else the group's (unknown groups: `openai-chat`). A
 * `client_type` penguin cannot route is an error naming the entry.
 */
function entryProtocol(
  clientType: string | undefined,
  groupProtocol: WireProtocol | undefined,
  pair: string,
): WireProtocol {
  if (clientType === undefined) return groupProtocol ?? "openai-chat";
  const routed = routeClientType(clientType);
  if (routed) return routed;
  throw new PenguinError("config", unroutableClientTypeMessage(pair, clientType));
}

/**
 * Resolve `sel` against the project config `cfg` to an endpoint and the
 * entry's settings. Protocol: the entry's `client_type` (routed), else the group's
 * (unknown groups: `openai-chat`). Base URL: the entry's, else the group's
 * default. Key: the entry's `api_key`, else the group's own env var.
 */
export function resolveModel(
  cfg: ProjectConfig,
  sel: ModelSelector,
  env: EnvSource = (name) => Deno.env.get(name),
  opts: ResolveOptions = {},
): ResolvedModel {
  const ref = resolveModelRef(cfg, sel, opts, env);
  const entry = findModel(cfg, ref)!;
  const group = findProviderGroup(ref.provider);
  const pair = `(${ref.provider}, ${ref.model_id})`;
  const addCmd = `penguin config model add --provider ${ref.provider} --model-id ${ref.model_id}`;

  const base = (entry.base_url ?? group?.base_url)?.replace(/\/+$/, "");
  if (!base) {
    throw new PenguinError(
      "config",
      `Model ${pair} has no base_url${
        where(opts)
      } and provider "${ref.provider}" has no default; ` +
        `set one with: ${addCmd} --base-url <url>`,
    );
  }

  let api_key: string | undefined;
  let key_source: ResolvedModel["key_source"] = "none";
  if (entry.api_key !== undefined && entry.api_key !== "") {
    api_key = entry.api_key;
    key_source = "entry";
  } else if (group?.api_key_env) {
    api_key = lookup(env, group.api_key_env);
    if (api_key !== undefined) key_source = "env";
  }
  if (api_key === undefined && group?.key_required && opts.requireKey !== false) {
    throw new PenguinError(
      "config",
      `No API key for model ${pair}: set ${group.api_key_env}, or store one with: ${addCmd} --api-key <key>`,
    );
  }

  const endpoint: ModelEndpoint = {
    provider: ref.provider,
    model_id: ref.model_id,
    protocol: entryProtocol(entry.client_type, group?.protocol, pair),
    base_url: base,
  };
  if (api_key !== undefined) endpoint.api_key = api_key;

  const out: ResolvedModel = {
    endpoint,
    vision: entry.vision !== false,
    fast_mode: entry.fast_mode === true,
    key_source,
  };
  if (entry.context_window !== undefined && entry.context_window >= MIN_CONTEXT_WINDOW) {
    out.context_window = entry.context_window;
  }
  if (entry.max_tokens !== undefined) out.max_tokens = entry.max_tokens;
  if (entry.pricing) out.pricing = { ...entry.pricing };
  if (entry.display_name !== undefined) out.display_name = entry.display_name;
  if (group?.api_key_env) out.key_env = group.api_key_env;
  return out;
}
