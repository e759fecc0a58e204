/**
 * The schema of `system_config.yaml` (zod, with penguin's messages), used
 * on a real parse and on every read of the parsed-config cache.
 *
 * @module
 */
import { z } from "zod";
import { AGENT_THINKING_LEVELS, type AgentThinkingLevel } from "./system_config.ts";

const str = z.string({ error: "expected a string" });
const int = z.number({ error: "expected an integer" }).int({ error: "expected an integer" });
const bool = z.boolean({ error: "expected true or false" });
const section = <T extends z.ZodRawShape>(shape: T) =>
  z.looseObject(shape, { error: "expected a mapping" });
const toggle = section({ enabled: bool.optional(), prompt: str.optional() });

/** A parsed `system_config.yaml` value → a `SystemConfig` (unknown keys kept). */
export const systemConfigSchema = z.looseObject({
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
