/**
 * The provider catalog: provider groups (protocol, default base URL, the one
 * env var a key may come from) and model presets with context window,
 * vision flag and USD prices. Data lives in `_catalog_data.ts`.
 *
 * Presets are listed, never copied into a project's config by themselves;
 * a model is usable once its pair is configured.
 *
 * @module
 */
import { GROUPS, PRESET_BLOCKS, type ProviderGroup } from "./_catalog_data.ts";
import type { WireProtocol } from "./wire.ts";

export type { ProviderGroup, ProviderKind } from "./_catalog_data.ts";

/** USD prices per one million tokens. */
export interface PresetPricing {
  /** Cached input. */
  cache_read: number;
  /** Uncached input. */
  cache_write: number;
  /** Output. */
  output: number;
}

/** One catalog model preset. */
export interface ModelPreset {
  /** Provider group id. */
  provider: string;
  /** Model id, sent upstream verbatim. */
  model_id: string;
  /** Context window in tokens. */
  context_window: number;
  /** Accepts images. */
  vision: boolean;
  /** USD per 1M tokens. */
  pricing: Readonly<PresetPricing>;
  /** Protocol when it differs from the group's. */
  client_type?: WireProtocol;
  /** The provider's recommended model: the one a first run suggests (one per provider). */
  recommended?: true;
}

/** CNY per USD used to convert CNY list prices. */
export const CNY_PER_USD = 7;

/** Convert a CNY price to USD at {@linkcode CNY_PER_USD}, rounded to 6 decimals. */
export function cnyToUsd(cny: number): number {
  return Math.round((cny / CNY_PER_USD) * 1e6) / 1e6;
}

/** Every provider group, in display order. */
export const PROVIDER_GROUPS: readonly ProviderGroup[] = Object.freeze(
  GROUPS.map((g) => Object.freeze({ ...g })),
);

function buildPresets(): ModelPreset[] {
  const out: ModelPreset[] = [];
  for (const block of PRESET_BLOCKS) {
    const usd = (n: number) => (block.currency === "CNY" ? cnyToUsd(n) : n);
    for (const [id, context_window, vision, cr, cw, o] of block.rows) {
      const model_id = (block.prefix ?? "") + id;
      const preset: ModelPreset = {
        provider: block.provider,
        model_id,
        context_window,
        vision,
        pricing: Object.freeze({ cache_read: usd(cr), cache_write: usd(cw), output: usd(o) }),
      };
      if (id === block.recommended) preset.recommended = true;
      for (const [prefix, protocol] of Object.entries(block.protocol_by_prefix ?? {})) {
        if (id.startsWith(prefix)) preset.client_type = protocol;
      }
      out.push(Object.freeze(preset));
    }
  }
  return out;
}

/** Every model preset, grouped by provider in display order. */
export const MODEL_PRESETS: readonly ModelPreset[] = Object.freeze(buildPresets());

/** The provider group `id`, if the catalog knows it. */
export function findProviderGroup(id: string): ProviderGroup | undefined {
  return PROVIDER_GROUPS.find((g) => g.id === id);
}

/** The preset for the exact pair, if any. */
export function findPreset(provider: string, model_id: string): ModelPreset | undefined {
  return MODEL_PRESETS.find((p) => p.provider === provider && p.model_id === model_id);
}

/** The presets of one provider group. */
export function presetsOf(provider: string): ModelPreset[] {
  return MODEL_PRESETS.filter((p) => p.provider === provider);
}

/** The provider's recommended preset (the one a first run suggests), if the catalog has presets for it. */
export function recommendedPreset(provider: string): ModelPreset | undefined {
  return MODEL_PRESETS.find((p) => p.provider === provider && p.recommended === true);
}
