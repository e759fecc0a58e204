/**
 * An MCP server's tools as penguin tools: named `mcp__<server>__<tool>`,
 * approved by the server's `permission` (with `auto`, a tool whose
 * `readOnlyHint` is true is read-only, any other may write), limited by its
 * `timeoutMs` and `maxOutputLength` like built-in tools.
 *
 * @module
 */
import { ANY_ARGS, defineTool } from "../tools/define.ts";
import {
  DEFAULT_MAX_OUTPUT_LENGTH,
  DEFAULT_TIMEOUT_MS,
  type JsonSchemaObject,
  type Tool,
  type ToolEvent,
  type ToolPermission,
} from "../tools/tool.ts";
import type { McpServerConfig } from "../state/mod.ts";
import type { Release } from "./answer_gate.ts";
import type { ListedTool, McpConnection } from "./connect.ts";
import { renderCallResult, type RenderedResult } from "./result.ts";
import {
  beyondCountLine,
  MAX_MCP_DEFINITIONS_CHARS,
  skippedLine,
  toolSize,
  TOTAL_REASON,
} from "./tool_limits.ts";

/** What a tool name offered to the model must match. */
export const MCP_TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

/** The name the model calls a server's tool by. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

/** The approval class of `tool` under the server's `permission` setting. */
export function mcpPermission(server: McpServerConfig, tool: ListedTool): ToolPermission {
  if (server.permission !== "auto") return server.permission;
  return tool.annotations?.readOnlyHint === true ? "r" : "rw";
}

function parametersOf(tool: ListedTool): JsonSchemaObject {
  const schema = (tool.inputSchema ?? {}) as Record<string, unknown>;
  const properties = typeof schema.properties === "object" && schema.properties !== null
    ? schema.properties as JsonSchemaObject["properties"]
    : {};
  return { ...schema, type: "object", properties };
}

function describeFailure(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return `MCP call failed: ${message}`;
}

/**
 * `value` with `mask` applied to every string in it (object keys too, at any
 * depth): what a server sends about its tools (names, descriptions, input
 * schemas) reaches the model and the trace, so a secret in it is masked first.
 */
export function maskStrings<T>(value: T, mask: (text: string) => string): T {
  if (typeof value === "string") return mask(value) as T;
  if (Array.isArray(value)) return value.map((v) => maskStrings(v, mask)) as T;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[mask(k)] = maskStrings(v, mask);
    return out as T;
  }
  return value;
}

/** Characters of one delta of an MCP answer. */
export const ANSWER_PIECE_CHARS = 64 * 1024;

/**
 * `text` in pieces of at most {@linkcode ANSWER_PIECE_CHARS}, each a copy
 * of its own (never split inside a surrogate pair). What is kept of a tool's
 * output (the head the model reads, the archive's tail) is cut from these
 * pieces; cut from the whole answer, a short head would keep all of it
 * alive (the runtime's substrings point into their source), 16 MB a call
 * for the session.
 */
export function* answerPieces(text: string): Generator<string> {
  for (let at = 0; at < text.length;) {
    let end = Math.min(at + ANSWER_PIECE_CHARS, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    // Concatenated then cut: the runtime copies the piece out of `text`.
    yield ("\0" + text.slice(at, end)).slice(1);
    at = end;
  }
}

/** The events of the result `render` makes. */
function* emit(render: () => RenderedResult): Generator<ToolEvent> {
  const rendered = render();
  for (const piece of answerPieces(rendered.text)) yield { type: "delta", text: piece };
  if (rendered.images.length > 0) yield { type: "images", images: rendered.images };
  if (rendered.isError) yield { type: "result", status: "failed" };
}

/** One listed tool (`shown`: as masked for the model) as a penguin tool that calls it on `conn`. */
function adapt(
  conn: McpConnection,
  listed: ListedTool,
  shown: ListedTool,
  name: string,
  mask: (text: string) => string,
): Tool {
  const { server } = conn;
  return defineTool({
    name,
    description: shown.description ?? shown.title ?? "",
    // The server validates its own arguments; the schema is offered to the model as listed.
    args: ANY_ARGS,
    parameters: parametersOf(shown),
    permission: mcpPermission(server, listed),
    timeoutMs: server.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxOutputLength: server.maxOutputLength ?? DEFAULT_MAX_OUTPUT_LENGTH,
    // A server's own `description` parameter is a real argument: keep it.
    callDescription: true,
    // No preview of its own: renderers show the generic `<name> <arguments on one line>`.
    async *run(args, ctx): AsyncGenerator<ToolEvent> {
      let result: unknown;
      // A large answer holds the process's answer gate until its output is handed on
      // (cut to maxOutputLength and archived): see lib/mcp/answer_gate.ts.
      let release: Release | undefined;
      try {
        try {
          result = await conn.callTool(listed.name, args, {
            signal: ctx.signal,
            timeoutMs: 0,
            keep: (r) => release = r,
          });
        } catch (err) {
          if (ctx.signal.aborted) throw err;
          yield { type: "delta", text: describeFailure(err) };
          return yield { type: "result", status: "failed" };
        }
        // Rendered in a generator of its own, so the answer is gone with its frame before `release`.
        yield* emit(() => {
          const raw = result;
          result = undefined;
          return renderCallResult(raw, mask);
        });
      } finally {
        release?.();
      }
    },
  }).create();
}

/** The tools of one server that fit, as `[listed, shown, name]`, with one warning line per reason. */
function boundedTools(
  conn: McpConnection,
  warn: (line: string) => void,
  taken: Set<string>,
  budget: { left: number },
  mask: (text: string) => string,
): [ListedTool, ListedTool, string][] {
  const server = conn.server.name;
  if (conn.listed > conn.tools.length) {
    warn(beyondCountLine(server, conn.listed - conn.tools.length, conn.listed));
  }
  const skipped = new Map<string, string[]>();
  const skip = (why: string, tool: string) => skipped.set(why, [...skipped.get(why) ?? [], tool]);
  const out: [ListedTool, ListedTool, string][] = [];
  for (const listed of conn.tools) {
    const sized = toolSize(listed);
    if ("problem" in sized) {
      skip(sized.problem, listed.name);
      continue;
    }
    if (sized.size > budget.left) {
      skip(TOTAL_REASON, listed.name);
      continue;
    }
    const shown = maskStrings(listed, mask);
    const name = mcpToolName(server, shown.name);
    if (!MCP_TOOL_NAME.test(name)) {
      warn(
        `[penguin] MCP server ${server}: tool ${JSON.stringify(listed.name)} skipped: ${
          JSON.stringify(name)
        } is not a valid tool name (letters, digits, _ and -, at most 128)`,
      );
      continue;
    }
    if (taken.has(name)) {
      warn(`[penguin] MCP server ${server}: tool ${name} skipped: the name is taken`);
      continue;
    }
    taken.add(name);
    budget.left -= sized.size;
    out.push([listed, shown, name]);
  }
  for (const [why, names] of skipped) warn(skippedLine(server, names, why));
  return out;
}

/**
 * The tools of the connected servers, in server order then listing order.
 * A name that is invalid, or taken by an earlier tool (or by `reserved`,
 * e.g. the built-in tools), is skipped with a warning. Every string a
 * server lists goes through `mask` (the session's secret masking) before it
 * is offered; a name that held a secret is then no valid name, and skipped.
 * The bounds of lib/mcp/tool_limits.ts apply: a tool too large, or past
 * the session's total, is skipped, reported in one line per server and reason.
 */
export function mcpTools(
  connections: readonly McpConnection[],
  warn: (line: string) => void,
  reserved: ReadonlySet<string> = new Set(),
  mask: (text: string) => string = (text) => text,
): Tool[] {
  const taken = new Set(reserved);
  const budget = { left: MAX_MCP_DEFINITIONS_CHARS };
  const out: Tool[] = [];
  for (const conn of connections) {
    for (const [listed, shown, name] of boundedTools(conn, warn, taken, budget, mask)) {
      out.push(adapt(conn, listed, shown, name, mask));
    }
  }
  return out;
}
