/**
 * Model prices for trace cost: the prices configured for the pair in the
 * project's `.project_config.toml` when present, else the catalog preset's.
 * Cost of a request = `(cache_read·p_cr + cache_write·p_cw + output·p_out) / 1e6`
 * USD. A pair with no price is reported as unknown, never priced at zero.
 *
 * @module
 */
import { findPreset } from "../models/catalog.ts";
import { errorMessage } from "../protocol/errors.ts";
import { loadProjectConfig, type ProjectConfig } from "../state/project_config.ts";

/** USD per one million tokens, and where the prices came from. */
export interface Price {
  /** Cached input. */
  cache_read: number;
  /** Uncached input. */
  cache_write: number;
  /** Output. */
  output: number;
  /** `config` (the project's model entry) or `catalog` (the preset). */
  source: "config" | "catalog";
}

/** Token counts as recorded in `token_usage`. */
export interface Tokens {
  /** Cached input. */
  cache_read: number;
  /** Uncached input. */
  cache_write: number;
  /** Output. */
  output: number;
}

/** The USD cost of `tokens` at `price`. */
export function costOf(tokens: Tokens, price: Price): number {
  return (tokens.cache_read * price.cache_read + tokens.cache_write * price.cache_write +
    tokens.output * price.output) / 1e6;
}

/** Looks prices up, loading each project config once. */
export interface PriceBook {
  /** The price of the pair, using the config at `configPath` when given; null when unknown. */
  priceFor(provider: string, modelId: string, configPath: string | null): Promise<Price | null>;
  /** Every pair's price with the config at `configPath` (loaded once): for a session that switches pairs. */
  pricesIn(configPath: string | null): Promise<(provider: string, modelId: string) => Price | null>;
}

/**
 * A {@linkcode PriceBook}. A config that cannot be read is reported once
 * through `warn` and the catalog is used instead.
 */
export function createPriceBook(warn: (message: string) => void = () => {}): PriceBook {
  const configs = new Map<string, Promise<ProjectConfig | null>>();
  const load = (path: string) => {
    let p = configs.get(path);
    if (!p) {
      p = loadProjectConfig(path).catch((err) => {
        warn(`cannot read "${path}" (${errorMessage(err)}); using catalog prices`);
        return null;
      });
      configs.set(path, p);
    }
    return p;
  };
  const priceIn = (cfg: ProjectConfig | null, provider: string, modelId: string): Price | null => {
    const entry = cfg?.models.find((m) => m.provider === provider && m.model_id === modelId);
    if (entry?.pricing) {
      const { cache_read, cache_write, output } = entry.pricing;
      return { cache_read, cache_write, output, source: "config" };
    }
    const preset = findPreset(provider, modelId);
    return preset ? { ...preset.pricing, source: "catalog" } : null;
  };
  return {
    async priceFor(provider, modelId, configPath) {
      return priceIn(configPath !== null ? await load(configPath) : null, provider, modelId);
    },
    async pricesIn(configPath) {
      const cfg = configPath !== null ? await load(configPath) : null;
      return (provider, modelId) => priceIn(cfg, provider, modelId);
    },
  };
}
