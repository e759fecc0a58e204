/**
 * `defineTool()`: one declaration per tool, holding everything about it —
 * name, description, argument schema (zod; the JSON Schema the model sees
 * is derived from it with `z.toJSONSchema`), permission, limits, the one-line preview renderers show, and the
 * implementation.
 *
 * ```ts
 * import { z } from "zod";
 * import { defineTool } from "./define.ts";
 *
 * export const echoTool = defineTool({
 *   name: "echo",
 *   description: "Say the text back.",
 *   args: z.object({ text: z.string() }),
 *   permission: "r",
 *   preview: ({ args }) => {
 *     const text = args()?.text;
 *     return typeof text === "string" ? text : null;
 *   },
 *   async *run(args) {
 *     yield { type: "delta", text: args.text };
 *   },
 * });
 * ```
 *
 * Arguments that do not fit `args` never reach `run`: the call fails with
 * an explanation naming the faulty parameter and the tool's parameters.
 *
 * @module
 */
import { z } from "zod";
import type { ToolPreviewFn } from "../display/tool_preview.ts";
import { fail, parseArgs } from "./_args.ts";
import {
  DEFAULT_MAX_OUTPUT_LENGTH,
  DEFAULT_TIMEOUT_MS,
  type JsonSchemaObject,
  type Tool,
  type ToolCallContext,
  type ToolDefinition,
  type ToolEvent,
  type ToolModelFilter,
  type ToolPermission,
} from "./tool.ts";

/** Arguments passed through unchecked, for tools that validate them themselves. */
export const ANY_ARGS: z.ZodType<Record<string, unknown>> = z.record(z.string(), z.unknown());

/** The declaration of one tool (see {@linkcode defineTool}). */
export interface ToolDeclaration<A, C extends ToolCallContext> {
  /** Tool name as the model calls it (`^[a-zA-Z0-9_-]{1,128}$`). */
  name: string;
  /** Description offered to the model. */
  description: string;
  /** Validates (and may normalize) the arguments before `run` sees them. */
  args: z.ZodType<A>;
  /**
   * The arguments as offered to the model, when `args` passes them through
   * ({@linkcode ANY_ARGS}) because the tool checks them itself; default `args`.
   */
  shape?: z.ZodType;
  /** The JSON Schema offered to the model, for tools whose schema comes as JSON (MCP); default: derived. */
  parameters?: JsonSchemaObject;
  /**
   * `r` (runs without asking in the read-only approval mode) or `rw` (asked
   * there), or a function of the validated arguments. With a function the
   * definition records `rw`, used when the arguments do not validate; a
   * configured permission that differs from it replaces the function.
   */
  permission: ToolPermission | ((args: A) => ToolPermission);
  /** Wall-clock limit in ms (default 120000); `<= 0` disables it. */
  timeoutMs?: number;
  /** Output cap in characters (default 16000); `<= 0` disables it. */
  maxOutputLength?: number;
  /** Keep a `description` parameter in the schema offered to the model (default false). */
  callDescription?: boolean;
  /** Offer only to vision or only to text-only session models. */
  forModel?: ToolModelFilter;
  /**
   * How renderers show a call, from arguments that may still be streaming
   * (so it reads the raw text, or `args()` once complete); a string result is
   * shown as `<name> <- <text>`. Absent: `<name> <arguments on one line>`.
   */
  preview?: ToolPreviewFn;
  /** Run one call with validated arguments; `definition` is the (possibly configured) one in use. */
  run(args: A, ctx: C, definition: ToolDefinition): AsyncIterable<ToolEvent>;
}

/** A defined tool: its default definition and how to instantiate it. */
export interface DefinedTool<C extends ToolCallContext = ToolCallContext> {
  /** The tool name. */
  readonly name: string;
  /** The default definition (config entries are merged over it). */
  readonly definition: ToolDefinition;
  /** The tool with `definition` (default: the default one). */
  create(definition?: ToolDefinition): Tool<C>;
  /** The declared preview (absent: the generic form). */
  readonly preview?: ToolPreviewFn;
  /** Why `args` do not fit this tool's schema (the failed call's explanation), or null. */
  checkArgs(definition: ToolDefinition, args: Record<string, unknown>): string | null;
}

/**
 * The JSON Schema of `args` as the model should see it (input shape, no
 * `$schema`). With `callDescription` an optional `description` property is
 * listed first in `required`: the model is asked for it, a call without it
 * still runs.
 */
export function argsJsonSchema(args: z.ZodType, callDescription = false): JsonSchemaObject {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(args, {
    io: "input",
    unrepresentable: "any",
  }) as Record<string, unknown>;
  if (schema.type !== "object") {
    throw new TypeError("a tool's args schema must describe an object");
  }
  const out = { type: "object", properties: {}, ...schema } as JsonSchemaObject;
  if (callDescription && "description" in out.properties) {
    out.required = ["description", ...(out.required ?? []).filter((n) => n !== "description")];
  }
  return out;
}

/** Build a tool from one declaration. */
export function defineTool<A, C extends ToolCallContext = ToolCallContext>(
  decl: ToolDeclaration<A, C>,
): DefinedTool<C> {
  const dynamic = typeof decl.permission === "function" ? decl.permission : undefined;
  const definition: ToolDefinition = {
    name: decl.name,
    description: decl.description,
    parameters: decl.parameters ??
      argsJsonSchema(decl.shape ?? decl.args, decl.callDescription ?? false),
    permission: typeof decl.permission === "string" ? decl.permission : "rw",
    timeoutMs: decl.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxOutputLength: decl.maxOutputLength ?? DEFAULT_MAX_OUTPUT_LENGTH,
    callDescription: decl.callDescription ?? false,
    ...(decl.forModel ? { forModel: decl.forModel } : {}),
  };
  const checkArgs = (def: ToolDefinition, raw: Record<string, unknown>): string | null => {
    const args = parseArgs(def, decl.args, raw);
    return args.ok ? null : args.message;
  };
  const create = (def: ToolDefinition = definition): Tool<C> => {
    const tool: Tool<C> = {
      definition: def,
      checkArgs: (raw) => checkArgs(def, raw),
      async *run(raw, ctx) {
        const args = parseArgs(def, decl.args, raw);
        if (!args.ok) return yield* fail(args.message);
        yield* decl.run(args.value, ctx, def);
      },
    };
    if (decl.preview) tool.preview = decl.preview;
    if (dynamic && def.permission === definition.permission) {
      tool.permissionFor = (raw) => {
        const parsed = decl.args.safeParse(raw);
        return parsed.success ? dynamic(parsed.data) : def.permission;
      };
    }
    return tool;
  };
  return Object.freeze({
    name: decl.name,
    definition: Object.freeze(definition),
    create,
    checkArgs,
    ...(decl.preview ? { preview: decl.preview } : {}),
  });
}
