/**
 * A session's tool set (reference §6.1): the built-in definitions, replaced
 * wholesale by the agent's `tools.builtin` when present (settings merged over
 * each tool's defaults; names without a built-in factory are dropped), then
 * filtered by the model's vision flag.
 *
 * read_file, write_file, edit_file and read_image (files) run confined
 * (lib/tools/worker/confined.ts): in the session's sandboxed tool host, or
 * with `--sandbox off` in a permission-narrowed Worker, unless
 * `confineFileTools: false`; the process then needs
 * `--unstable-worker-options` (deno.json sets it).
 *
 * The subagent tools (run_subagent, input_subagent, kill_subagent) follow
 * kill_command in the default list; they need a session's children
 * registry, so they are instantiated only from `opts.factories` (a session
 * at the subagent depth cap passes none, and they are dropped).
 *
 * @module
 */
import type { ToolSpec } from "../protocol/types.ts";
import type { BuiltinToolConfig } from "../state/system_config.ts";
import {
  BUILTIN_TOOL_FACTORIES,
  DEFAULT_TOOL_DEFINITIONS,
  type Tool,
  type ToolDefinition,
  type ToolFactory,
  type ToolPermission,
  toolSpec,
} from "../tools/mod.ts";
import { confinedFileTools } from "../tools/worker/mod.ts";
import { SUBAGENT_TOOL_DEFINITIONS } from "./subagents/definitions.ts";

/** The tools of one session. */
export interface Toolset {
  /** Runnable tools by name. */
  tools: Map<string, Tool>;
  /** What the model is offered, in order. */
  specs: ToolSpec[];
  /** A tool's permission (undefined for unknown names). */
  permissionOf(name: string): ToolPermission | undefined;
  /** Stop the confined file tools' workers (idle workers also end by themselves). */
  dispose?(): void;
}

/** Options of {@linkcode createToolset}. */
export interface ToolsetOptions {
  /** Run read_file, write_file and edit_file in a confined Worker (default true). */
  confineFileTools?: boolean;
  /** Session-bound factories (the subagent tools), consulted after the built-in table. */
  factories?: Readonly<Record<string, ToolFactory>>;
}

/** The default definitions with the subagent tools after kill_command (§6.3 order). */
function defaultDefinitions(): ToolDefinition[] {
  const out = [...DEFAULT_TOOL_DEFINITIONS];
  const at = out.findIndex((d) => d.name === "kill_command");
  out.splice(at < 0 ? out.length : at + 1, 0, ...SUBAGENT_TOOL_DEFINITIONS);
  return out;
}

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** Merge one `tools.builtin` entry over the built-in default of the same name. */
export function definitionFromConfig(
  entry: BuiltinToolConfig,
  base: ToolDefinition,
): ToolDefinition {
  const def: ToolDefinition = { ...base };
  if (typeof entry.description === "string") def.description = entry.description;
  if (entry.parameters && typeof entry.parameters === "object") {
    def.parameters = entry.parameters as ToolDefinition["parameters"];
  }
  if (entry.permission === "r" || entry.permission === "rw") def.permission = entry.permission;
  def.timeoutMs = num(entry.timeoutMs) ?? def.timeoutMs;
  def.maxOutputLength = num(entry.maxOutputLength) ?? def.maxOutputLength;
  if (typeof entry.call_description === "boolean") def.callDescription = entry.call_description;
  if (entry.forModel === "vision" || entry.forModel === "text-only") def.forModel = entry.forModel;
  return def;
}

/** The definitions a session offers: config entries (or the defaults), kept only when a factory exists. */
export function resolveToolDefinitions(builtin?: readonly BuiltinToolConfig[]): ToolDefinition[] {
  const all = defaultDefinitions();
  const defaults = new Map(all.map((d) => [d.name, d]));
  if (!builtin) return all;
  const subagent = new Set(SUBAGENT_TOOL_DEFINITIONS.map((d) => d.name));
  const out: ToolDefinition[] = [];
  for (const entry of builtin) {
    const base = defaults.get(entry.name);
    if (!base || !(BUILTIN_TOOL_FACTORIES[entry.name] || subagent.has(entry.name))) continue;
    if (out.some((d) => d.name === entry.name)) continue;
    out.push(definitionFromConfig(entry, base));
  }
  return out;
}

/** Instantiate the tool set for a model with or without `vision`. */
export function createToolset(
  definitions: readonly ToolDefinition[],
  vision: boolean,
  opts: ToolsetOptions = {},
): Toolset {
  const tools = new Map<string, Tool>();
  const specs: ToolSpec[] = [];
  const confined = opts.confineFileTools === false ? undefined : confinedFileTools();
  for (const def of definitions) {
    if (def.forModel === "vision" && !vision) continue;
    if (def.forModel === "text-only" && vision) continue;
    const factory = confined?.factories[def.name] ?? BUILTIN_TOOL_FACTORIES[def.name] ??
      opts.factories?.[def.name];
    if (!factory || tools.has(def.name)) continue;
    tools.set(def.name, factory(def));
    specs.push(toolSpec(def));
  }
  return {
    tools,
    specs,
    permissionOf: (name) => tools.get(name)?.definition.permission,
    ...(confined ? { dispose: confined.dispose } : {}),
  };
}
