/**
 * `system_config.yaml`: one agent's configuration, in PenguinHarness's format. Omitted
 * keys are not filled in on load; they fall back at their use site through
 * {@linkcode resolveSystemConfig}. Unknown keys are kept.
 *
 * Reading and writing the file (the YAML parser) and the schema are apart
 * (system_config_parse.ts, _system_config_schema.ts): an agent's start reads its configuration from
 * a cache when the file is unchanged (system_config_cache.ts), and then
 * loads no YAML library.
 *
 * @module
 */
import {
  DEFAULT_COMPACTION_PROMPT,
  DEFAULT_MEMORY_PROMPT,
  DEFAULT_MEMORY_WORKSPACE_PROMPT,
  DEFAULT_SCHEDULES_PROMPT,
  DEFAULT_SKILLS_PROMPT,
  DEFAULT_SYSTEM_PROMPT,
  DEFAULT_VAULT_PROMPT,
} from "./default_prompts.ts";

/** The defaults generation penguin's built-in agent config belongs to. */
export const KERNEL_VERSION = "2026-08-21";

/** Reasoning effort levels an agent may ask for. */
export type AgentThinkingLevel = "none" | "low" | "medium" | "high" | "xhigh" | "max";

/** Every {@linkcode AgentThinkingLevel}. */
export const AGENT_THINKING_LEVELS: readonly AgentThinkingLevel[] = [
  "none",
  "low",
  "medium",
  "high",
  "xhigh",
  "max",
];

/** One `tools.builtin` entry: a tool name plus its settings (description, parameters, permission, timeout overrides). */
export interface BuiltinToolConfig {
  /** Built-in tool name, e.g. `read_file`. */
  name: string;
  /** Other settings (description, parameters, permission, timeoutMs, …), kept as written. */
  [setting: string]: unknown;
}

/** An on/off section with an optional prompt (`vault`, `skills`, `schedules`). */
export interface PromptSection {
  /** `false` turns the section off. */
  enabled?: boolean;
  /** Section prompt. */
  prompt?: string;
  /** Unknown keys, kept. */
  [key: string]: unknown;
}

/** A loaded `system_config.yaml`, as written: omitted keys stay omitted, unknown keys are kept. */
export interface SystemConfig {
  /** Display name. */
  name?: string;
  /** Description. */
  description?: string;
  /** Agent State version (anything but a natural number reads as 1). */
  version?: unknown;
  /** Defaults generation stamp. */
  kernel_version?: string;
  /** The system prompt template (required). */
  system_prompt: string;
  /** Max LLM turns per task. */
  max_turns?: number;
  /** Request settings. */
  model?: {
    max_tokens?: number;
    thinking_level?: AgentThinkingLevel;
    timeoutMs?: number;
    [key: string]: unknown;
  };
  /** Compaction settings (`mode` other than `discard` reads as `summarize`). */
  compaction?: {
    max_context_length?: number;
    max_session_turns?: number;
    mode?: unknown;
    prompt?: string;
    [key: string]: unknown;
  };
  /** Memory section. */
  memory?: {
    enabled?: boolean;
    prompt?: string;
    workspace_prompt?: string;
    [key: string]: unknown;
  };
  /** Vault section. */
  vault?: PromptSection;
  /** Skills section. */
  skills?: PromptSection;
  /** Schedules section. */
  schedules?: PromptSection;
  /** OpenTelemetry export of the sessions' spans (environment variables win over `otlp`). */
  telemetry?: {
    otlp?: {
      /** Base URL of an OTLP/HTTP collector; traces go to `<endpoint>/v1/traces`. */
      endpoint?: string;
      /** The traces URL, used as it is (over `endpoint`). */
      traces_endpoint?: string;
      /** Headers sent with every export (e.g. an authorization). */
      headers?: Record<string, string>;
      [key: string]: unknown;
    };
    /** Put message contents on the spans (default false). */
    include_content?: boolean;
    [key: string]: unknown;
  };
  /** Tools: `builtin` replaces the default list wholesale; MCP servers are validated by their layer. */
  tools?: { builtin?: BuiltinToolConfig[]; mcpServers?: unknown[]; [key: string]: unknown };
  /** Unknown top-level keys, kept. */
  [key: string]: unknown;
}

/** A {@linkcode SystemConfig} with every default applied. */
export interface ResolvedSystemConfig {
  /** Display name ("" when unset). */
  name: string;
  /** Description ("" when unset). */
  description: string;
  /** Agent State version: a natural number, 1 when missing or invalid. */
  version: number;
  /** Defaults generation stamp. */
  kernel_version: string;
  /** The system prompt template. */
  system_prompt: string;
  /** Max LLM turns per task; ≤ 0 = unlimited. */
  max_turns: number;
  /** Model request settings. */
  model: {
    /** Output ceiling per request; ≤ 0 = send none. */
    max_tokens: number;
    /** Reasoning effort. */
    thinking_level: AgentThinkingLevel;
    /** Idle timeout between upstream events (ms); ≤ 0 disables. */
    timeoutMs: number;
  };
  /** Compaction settings. */
  compaction: {
    /** Context-token threshold; ≤ 0 disables. */
    max_context_length: number;
    /** Completed-request threshold; ≤ 0 = unlimited. */
    max_session_turns: number;
    /** Compaction mode (anything but `discard` reads as `summarize`). */
    mode: "summarize" | "discard";
    /** Summarize prompt. */
    prompt: string;
  };
  /** Memory section. */
  memory: { enabled: boolean; prompt: string; workspace_prompt: string };
  /** Vault section. */
  vault: { enabled: boolean; prompt: string };
  /** Skills section. */
  skills: { enabled: boolean; prompt: string };
  /** Schedules section. */
  schedules: { enabled: boolean; prompt: string };
  /** Tools. `builtin` undefined = the tools layer's default list. */
  tools: { builtin?: BuiltinToolConfig[]; mcpServers: unknown[] };
}

/**
 * Fill every omitted key with its default, as written below: unlimited turns (-1),
 * 32000 output tokens, medium thinking, a 256000-token context, every prompt section
 * enabled with its built-in text, and no MCP servers.
 */
export function resolveSystemConfig(cfg: SystemConfig): ResolvedSystemConfig {
  const v = cfg.version;
  const version = typeof v === "number" && Number.isInteger(v) && v >= 1 ? v : 1;
  const tools: ResolvedSystemConfig["tools"] = { mcpServers: cfg.tools?.mcpServers ?? [] };
  if (cfg.tools?.builtin) tools.builtin = cfg.tools.builtin;
  return {
    name: cfg.name ?? "",
    description: cfg.description ?? "",
    version,
    kernel_version: cfg.kernel_version ?? KERNEL_VERSION,
    system_prompt: cfg.system_prompt,
    max_turns: cfg.max_turns ?? -1,
    model: {
      max_tokens: cfg.model?.max_tokens ?? 32000,
      thinking_level: cfg.model?.thinking_level ?? "medium",
      timeoutMs: cfg.model?.timeoutMs ?? 120000,
    },
    compaction: {
      max_context_length: cfg.compaction?.max_context_length ?? 256000,
      max_session_turns: cfg.compaction?.max_session_turns ?? -1,
      mode: cfg.compaction?.mode === "discard" ? "discard" : "summarize",
      prompt: cfg.compaction?.prompt ?? DEFAULT_COMPACTION_PROMPT,
    },
    memory: {
      enabled: cfg.memory?.enabled ?? true,
      prompt: cfg.memory?.prompt ?? DEFAULT_MEMORY_PROMPT,
      workspace_prompt: cfg.memory?.workspace_prompt ?? DEFAULT_MEMORY_WORKSPACE_PROMPT,
    },
    vault: {
      enabled: cfg.vault?.enabled ?? true,
      prompt: cfg.vault?.prompt ?? DEFAULT_VAULT_PROMPT,
    },
    skills: {
      enabled: cfg.skills?.enabled ?? true,
      prompt: cfg.skills?.prompt ?? DEFAULT_SKILLS_PROMPT,
    },
    schedules: {
      enabled: cfg.schedules?.enabled ?? true,
      prompt: cfg.schedules?.prompt ?? DEFAULT_SCHEDULES_PROMPT,
    },
    tools,
  };
}

/**
 * The config a new agent is written with: every key PenguinHarness keeps in
 * the file, section prompts included, so it runs the agent on penguin's
 * values rather than mixing in its own defaults. `builtin` is the full
 * default `tools.builtin` list (the tools layer supplies it; without it the
 * key stays implicit and the default list applies at use).
 */
export function defaultSystemConfig(
  identity: { name?: string; description?: string } = {},
  builtin?: readonly BuiltinToolConfig[],
): SystemConfig {
  const cfg: SystemConfig = {
    version: 1,
    kernel_version: KERNEL_VERSION,
    system_prompt: DEFAULT_SYSTEM_PROMPT,
    max_turns: -1,
    model: { max_tokens: 32000, thinking_level: "medium", timeoutMs: 120000 },
    compaction: {
      max_context_length: 256000,
      max_session_turns: -1,
      mode: "summarize",
      prompt: DEFAULT_COMPACTION_PROMPT,
    },
    memory: {
      enabled: true,
      prompt: DEFAULT_MEMORY_PROMPT,
      workspace_prompt: DEFAULT_MEMORY_WORKSPACE_PROMPT,
    },
    vault: { enabled: true, prompt: DEFAULT_VAULT_PROMPT },
    skills: { enabled: true, prompt: DEFAULT_SKILLS_PROMPT },
    schedules: { enabled: true, prompt: DEFAULT_SCHEDULES_PROMPT },
    tools: {
      ...(builtin ? { builtin: builtin.map((t) => structuredClone(t)) } : {}),
      mcpServers: [],
    },
  };
  return identity.name !== undefined || identity.description !== undefined
    ? {
      ...(identity.name !== undefined ? { name: identity.name } : {}),
      ...(identity.description !== undefined ? { description: identity.description } : {}),
      ...cfg,
    }
    : cfg;
}
