/**
 * `system_config.yaml`: one agent's configuration, in PenguinHarness's format. Omitted
 * keys are not filled in on load; they fall back at their use site through
 * {@linkcode resolveSystemConfig}. Unknown keys are kept.
 *
 * @module
 */
import { dirname } from "node:path";
import { LineCounter, stringify } from "yaml";
import { parseYamlDocument, YAML_CONFIG_MAX_NODES, YAML_MAX_ALIAS_COUNT } from "./bounded_yaml.ts";
import { z } from "zod";
import { schemaError, yamlLocator, yamlSyntaxError, zodProblems } from "./_config_errors.ts";
import { mkdirPrivate, writeFileAtomic } from "./_fs.ts";
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

const str = z.string({ error: "expected a string" });
const int = z.number({ error: "expected an integer" }).int({ error: "expected an integer" });
const bool = z.boolean({ error: "expected true or false" });
const section = <T extends z.ZodRawShape>(shape: T) =>
  z.looseObject(shape, { error: "expected a mapping" });
const toggle = section({ enabled: bool.optional(), prompt: str.optional() });

const schema = z.looseObject({
  name: str.optional(),
  description: str.optional(),
  // Invalid versions are not an error: they read as 1 (see resolveSystemConfig).
  version: z.unknown().optional(),
  kernel_version: z.preprocess((v) => (v instanceof Date ? v.toISOString().slice(0, 10) : v), str)
    .optional(),
  system_prompt: z.string({
    error: "expected a string (the system prompt template; the field is required)",
  }),
  max_turns: int.optional(),
  model: section({
    max_tokens: int.optional(),
    thinking_level: z.enum(AGENT_THINKING_LEVELS as [AgentThinkingLevel, ...AgentThinkingLevel[]])
      .optional(),
    timeoutMs: z.number({ error: "expected a number of milliseconds" }).optional(),
  }).optional(),
  compaction: section({
    max_context_length: int.optional(),
    max_session_turns: int.optional(),
    mode: z.unknown().optional(),
    prompt: str.optional(),
  }).optional(),
  memory: section({
    enabled: bool.optional(),
    prompt: str.optional(),
    workspace_prompt: str.optional(),
  })
    .optional(),
  vault: toggle.optional(),
  skills: toggle.optional(),
  schedules: toggle.optional(),
  telemetry: section({
    otlp: section({
      endpoint: str.optional(),
      traces_endpoint: str.optional(),
      headers: z.record(z.string(), str, { error: "expected a mapping of header names to strings" })
        .optional(),
    }).optional(),
    include_content: bool.optional(),
  }).optional(),
  tools: section({
    builtin: z.array(z.looseObject({ name: str }, { error: "expected a mapping with a name" }), {
      error: "expected a list of tool settings",
    }).optional(),
    mcpServers: z.array(z.unknown(), { error: "expected a list of MCP servers" }).optional(),
  }).optional(),
}, { error: "expected a mapping with at least a system_prompt field" });

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

/** Parse and validate YAML `text`; `file` names the file in errors (with line and column). */
export function parseSystemConfig(text: string, file: string): SystemConfig {
  const lineCounter = new LineCounter();
  const doc = parseYamlDocument(text, file, {
    lineCounter,
    prettyErrors: true,
    maxNodes: YAML_CONFIG_MAX_NODES,
  });
  if (doc.errors.length > 0) throw yamlSyntaxError(file, doc.errors[0]);
  const value = doc.toJS({ maxAliasCount: YAML_MAX_ALIAS_COUNT });
  const result = schema.safeParse(value, { reportInput: true });
  if (!result.success) {
    throw schemaError(
      file,
      zodProblems(result.error.issues),
      yamlLocator(doc.contents, lineCounter),
    );
  }
  return result.data as SystemConfig;
}

/** Load the file at `path` (it must exist). */
export async function loadSystemConfig(path: string): Promise<SystemConfig> {
  return parseSystemConfig(await Deno.readTextFile(path), path);
}

/** Render `cfg` as YAML (multi-line strings as literal blocks, no line folding). */
export function renderSystemConfig(cfg: SystemConfig): string {
  return stringify(cfg, { lineWidth: 0 });
}

/** Write `cfg` to `path` atomically (mode 0644), creating parent dirs (0700). */
export async function saveSystemConfig(path: string, cfg: SystemConfig): Promise<void> {
  await mkdirPrivate(dirname(path));
  await writeFileAtomic(path, renderSystemConfig(cfg), 0o644);
}
