/**
 * The shape of `.project_config.toml` once loaded (the same TOML format as PenguinHarness).
 *
 * @module
 */
import type { CommandPolicyRule } from "./command_policy_defaults.ts";

/**
 * Every wire protocol penguin speaks, in display order: the one declaration
 * of the protocol ids (`models/wire.ts`'s `WireProtocol` is this type).
 */
export const CLIENT_TYPES = [
  "openai-chat",
  "openai-responses",
  "anthropic-messages",
  "gemini",
] as const;

/** Wire protocols a model entry may pin with `client_type`. */
export type ClientType = (typeof CLIENT_TYPES)[number];

/** A model reference: always the complete pair. */
export interface ModelRef {
  /** Provider group id, e.g. `deepseek`. */
  provider: string;
  /** Model id, sent upstream verbatim. */
  model_id: string;
}

/** Prices in USD per one million tokens. */
export interface ModelPricing {
  /** Always `usd_per_mtok`. */
  unit: "usd_per_mtok";
  /** Cached input tokens. */
  cache_read: number;
  /** Uncached input tokens. */
  cache_write: number;
  /** Output tokens (reasoning included). */
  output: number;
}

/** One `[[models]]` entry. */
export interface ModelEntry extends ModelRef {
  /** Context window in tokens (values < 4096 are treated as unset at use). */
  context_window?: number;
  /** Per-model output ceiling; overrides the agent's `model.max_tokens`. */
  max_tokens?: number;
  /**
   * PenguinHarness's gateway client type or routing key, verbatim as on disk
   * (`ant-messages`, `minimax-m3`, `kimi-k2.5`, …); absent = the provider
   * group's protocol. Routed to a wire protocol only when the model is used.
   */
  client_type?: string;
  /** Display name. */
  display_name?: string;
  /** Accepts images; absent means true. */
  vision?: boolean;
  /** Ask for the provider's fast tier; only `true` is stored. */
  fast_mode?: boolean;
  /** Prices. */
  pricing?: ModelPricing;
  /** Inline API key; absent = the provider group's own env var. */
  api_key?: string;
  /** Inline base URL; absent = the provider group's default. */
  base_url?: string;
  /** ISO time the api_key was written (display only). */
  created_at?: string;
  /** Keys penguin does not know, kept as found and written back. */
  extra?: Record<string, unknown>;
}

/** Approval modes a chat can start with. */
export type ApprovalMode = "allow-all" | "deny-all" | "read-only" | "always-ask";

/** Thinking levels a chat can start with (never `none`). */
export type ChatThinkingLevel = "low" | "medium" | "high" | "xhigh" | "max";

/** `[default_chat]`: prefill for a new chat. Each key is parsed on its own; bad ones are dropped. */
export interface DefaultChat {
  /** Agent id. */
  agent_id?: string;
  /** Workspace path. */
  workspace?: string;
  /** Approval mode. */
  approval_mode?: ApprovalMode;
  /** Thinking level. */
  thinking_level?: ChatThinkingLevel;
}

/** `[command_policy]`. */
export interface CommandPolicy {
  /** Absent in the file means on; only `false` is stored. */
  enabled: boolean;
  /** Absent = the factory rules; an empty list = no rules. */
  rules?: CommandPolicyRule[];
}

/** A loaded `.project_config.toml`. */
export interface ProjectConfig {
  /** Display name. */
  name?: string;
  /** Default model pair. */
  default_model?: ModelRef;
  /** Model used to describe images for text-only models. */
  vision_model?: ModelRef;
  /** New-chat prefill. */
  default_chat: DefaultChat;
  /** Command policy. */
  command_policy: CommandPolicy;
  /** Model entries, unique by pair. */
  models: ModelEntry[];
  /** Top-level keys penguin does not know, kept as found and written back. */
  extra: Record<string, unknown>;
}
