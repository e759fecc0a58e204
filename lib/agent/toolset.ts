/**
 * A session's tool set, assembled from its tool sources (`tools/source.ts`):
 * first the built-in source, then the session's own (MCP servers, SDK
 * tools). Every tool a source offers is kept unless its name is invalid or
 * taken; then the set is filtered by the model's vision flag.
 *
 * The built-in source: the built-in definitions, replaced
 * wholesale by the agent's `tools.builtin` when present (settings merged over
 * each tool's defaults; config names without a built-in factory are dropped:
 * config alone cannot define a tool).
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
 * describe_image follows read_image in the default list; it is instantiated
 * only with the project's vision model (`opts.vision`) and loads images
 * through the same (confined) read_image, so its path policy is read_image's.
 *
 * @module
 */
import type { ToolPreviews } from "../display/tool_preview.ts";
import { errorMessage } from "../protocol/errors.ts";
import type { EventPayload } from "../protocol/events.ts";
import type { ToolSpec } from "../protocol/types.ts";
import type { BuiltinToolConfig } from "../state/system_config.ts";
import { BUILTIN_TOOL_FACTORIES, DEFAULT_TOOL_DEFINITIONS } from "../tools/builtin_table.ts";
import type { ToolContext } from "../tools/context.ts";
import {
  createDescribeImageTool,
  DESCRIBE_IMAGE_DEFINITION,
  type VisionDescriber,
} from "../tools/describe_image.ts";
import { describeArgumentsProblem } from "../tools/environment.ts";
import { READ_IMAGE_DEFINITION } from "../tools/read_image.ts";
import {
  type Tool,
  type ToolDefinition,
  type ToolFactory,
  type ToolPermission,
  toolSpec,
} from "../tools/tool.ts";
import { TOOL_NAME_PATTERN, type ToolSource, type ToolSourceContext } from "../tools/source.ts";
import { confinedFileTools } from "../tools/worker/mod.ts";
import { SUBAGENT_TOOL_DEFINITIONS } from "./subagents/tools.ts";

/** The tools of one session. */
export interface Toolset {
  /** Runnable tools by name. */
  tools: Map<string, Tool<ToolContext>>;
  /** What the model is offered, in order. */
  specs: ToolSpec[];
  /**
   * The permission of a call to `name` (with its arguments, when the tool's
   * permission depends on them); undefined for unknown names.
   */
  permissionOf(name: string, args?: Record<string, unknown>): ToolPermission | undefined;
  /** The preview of each of these tools (undefined: unknown tool, or it has none). */
  previewOf: ToolPreviews;
  /**
   * Why a call would fail before its tool does anything (unknown tool,
   * arguments that are not a JSON object or do not fit the schema), or null.
   */
  argumentError(name: string, rawArguments: string): string | null;
  /** Close every opened source (the confined file tools' workers, MCP clients, …). */
  dispose(): Promise<void>;
  /** The sources' events for the trace, in source order (written before `tool_list_ready`). */
  records: EventPayload[];
  /**
   * Open the lazy sources (once; later calls wait for the same opening):
   * their tools, specs and records are added after the others'. The
   * session calls it at its first run, before `tool_list_ready`.
   */
  ready(): Promise<void>;
}

/** The default definitions with the subagent tools after kill_command and describe_image after read_image. */
function defaultDefinitions(): ToolDefinition[] {
  const out = [...DEFAULT_TOOL_DEFINITIONS];
  const at = out.findIndex((d) => d.name === "kill_command");
  out.splice(at < 0 ? out.length : at + 1, 0, ...SUBAGENT_TOOL_DEFINITIONS);
  const image = out.findIndex((d) => d.name === "read_image");
  out.splice(image < 0 ? out.length : image + 1, 0, DESCRIBE_IMAGE_DEFINITION);
  return out;
}

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** Merge one `tools.builtin` entry over the built-in default of the same name. */

/** Why a call to `tool` would fail before it does anything, or null (see `Toolset.argumentError`). */
function argumentErrorOf(
  tool: Tool<ToolContext> | undefined,
  name: string,
  raw: string,
): string | null {
  if (!tool) return `Unknown tool: ${name}`;
  const problem = describeArgumentsProblem(name, raw);
  if (problem !== undefined) return problem;
  return tool.checkArgs?.(JSON.parse(raw) as Record<string, unknown>) ?? null;
}
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

/** The built-in definitions a session offers: config entries (or the defaults), kept only when a factory exists. */
export function resolveToolDefinitions(builtin?: readonly BuiltinToolConfig[]): ToolDefinition[] {
  const all = defaultDefinitions();
  const defaults = new Map(all.map((d) => [d.name, d]));
  if (!builtin) return all;
  const sessionBound = new Set(
    [...SUBAGENT_TOOL_DEFINITIONS, DESCRIBE_IMAGE_DEFINITION].map((d) => d.name),
  );
  const out: ToolDefinition[] = [];
  for (const entry of builtin) {
    const base = defaults.get(entry.name);
    if (!base || !(BUILTIN_TOOL_FACTORIES[entry.name] || sessionBound.has(entry.name))) continue;
    if (out.some((d) => d.name === entry.name)) continue;
    out.push(definitionFromConfig(entry, base));
  }
  return out;
}

/** Options of {@linkcode builtinToolSource}. */
export interface BuiltinSourceOptions {
  /** The agent's `tools.builtin` (absent: the default list). */
  builtin?: readonly BuiltinToolConfig[];
  /** Run read_file, write_file, edit_file and read_image confined (default true). */
  confineFileTools?: boolean;
  /** Session-bound factories (the subagent tools), consulted after the built-in table. */
  factories?: Readonly<Record<string, ToolFactory<ToolContext>>>;
  /**
   * The project's vision model: describe_image is built with it (loading
   * images through the same read_image the session uses). Absent: no
   * describe_image.
   */
  vision?: VisionDescriber;
}

/**
 * The built-in tools as a source: the definitions of `tools.builtin` (or
 * the defaults), each instantiated from the confined, built-in or
 * session-bound factories; names without one are dropped (config alone
 * cannot define a tool). Closing it stops the confined tools' workers.
 */
export function builtinToolSource(opts: BuiltinSourceOptions = {}): ToolSource {
  return {
    name: "builtin",
    open() {
      const confined = opts.confineFileTools === false ? undefined : confinedFileTools();
      const tools: Tool<ToolContext>[] = [];
      const vision = opts.vision;
      const describe: ToolFactory<ToolContext> | undefined = vision
        ? (def) => {
          const readImage = confined?.factories.read_image ?? BUILTIN_TOOL_FACTORIES.read_image!;
          return createDescribeImageTool(
            { describer: vision, readImage: readImage(READ_IMAGE_DEFINITION) },
            def,
          );
        }
        : undefined;
      for (const def of resolveToolDefinitions(opts.builtin)) {
        const factory = confined?.factories[def.name] ?? BUILTIN_TOOL_FACTORIES[def.name] ??
          opts.factories?.[def.name] ?? (def.name === "describe_image" ? describe : undefined);
        if (factory) tools.push(factory(def));
      }
      return { tools, ...(confined ? { close: confined.dispose } : {}) };
    },
  };
}

function offered(def: ToolDefinition, vision: boolean): boolean {
  if (def.forModel === "vision") return vision;
  if (def.forModel === "text-only") return !vision;
  return true;
}

/**
 * Open every source (in parallel) and assemble the session's tool set, in
 * source order. A source that fails to open, a tool with an invalid name
 * and a second tool of a taken name are skipped with a warning; tools not
 * meant for this model (`forModel`) are left out silently.
 */
export async function openToolset(
  sources: readonly ToolSource[],
  ctx: ToolSourceContext,
): Promise<Toolset> {
  const tools = new Map<string, Tool<ToolContext>>();
  const specs: ToolSpec[] = [];
  const closers: (() => void | Promise<void>)[] = [];
  const records: EventPayload[] = [];
  let disposed = false;
  /** Open `batch` in parallel and take in their tools, in order. */
  const take = async (batch: readonly ToolSource[]) => {
    const opened = await Promise.allSettled(batch.map(async (s) => await s.open(ctx)));
    opened.forEach((result, i) => {
      const source = batch[i]!.name;
      if (result.status === "rejected") {
        ctx.warn(
          `[penguin] tool source "${source}" could not be opened (${
            errorMessage(result.reason)
          }); its tools are skipped.`,
        );
        return;
      }
      const { tools: offeredTools, close } = result.value;
      if (close) closers.push(() => close.call(result.value));
      records.push(...(result.value.records ?? []));
      for (const tool of offeredTools) {
        const def = tool.definition;
        if (!offered(def, ctx.vision)) continue;
        if (typeof def.name !== "string" || !TOOL_NAME_PATTERN.test(def.name)) {
          ctx.warn(
            `[penguin] tool ${JSON.stringify(def.name)} of source "${source}" is skipped: ` +
              "a tool name is 1 to 128 letters, digits, _ or -.",
          );
          continue;
        }
        if (tools.has(def.name)) {
          ctx.warn(
            `[penguin] tool "${def.name}" of source "${source}" is skipped: ` +
              "an earlier source already offers a tool of that name.",
          );
          continue;
        }
        tools.set(def.name, tool);
        specs.push(toolSpec(def));
      }
    });
  };
  await take(sources.filter((s) => !s.lazy));
  const lazy = sources.filter((s) => s.lazy);
  let opening: Promise<void> | undefined;
  const ready = () => {
    if (disposed) return Promise.resolve();
    opening ??= take(lazy);
    return opening;
  };
  return {
    tools,
    specs,
    records,
    ready,
    permissionOf(name, args) {
      const tool = tools.get(name);
      if (!tool) return undefined;
      return args && tool.permissionFor ? tool.permissionFor(args) : tool.definition.permission;
    },
    previewOf: (name) => tools.get(name)?.preview,
    argumentError: (name, raw) => argumentErrorOf(tools.get(name), name, raw),
    async dispose() {
      disposed = true;
      // A lazy opening under way finishes first, so what it started is closed too.
      await opening?.catch(() => {});
      const results = await Promise.allSettled(closers.map(async (close) => await close()));
      const failed = results.find((r) => r.status === "rejected");
      if (failed) throw (failed as PromiseRejectedResult).reason;
    },
  };
}
