/**
 * Tool sources: how tools reach a session. A session is created with a list
 * of {@linkcode ToolSource}s (the built-in tools are one; MCP servers and
 * SDK users add more). Each source is opened once per session, when the
 * session is created (or, for a `lazy` one, at its first run), and may do
 * its work then (connect, list, spawn);
 * the session closes what it opened when it is disposed. One source may be
 * shared by several sessions (a parent and its subagents): every open gets
 * its own handle.
 *
 * The session offers the tools of every source, in source order. A tool
 * whose name is not `^[a-zA-Z0-9_-]{1,128}$`, or is already taken, is
 * skipped with a warning; so is a source that fails to open.
 *
 * @module
 */
import type { EventPayload } from "../protocol/events.ts";
import type { SandboxPolicy } from "../sandbox/policy.ts";
import type { ToolContext } from "./context.ts";
import type { DefinedTool } from "./define.ts";
import type { Tool } from "./tool.ts";

/** Names a tool may have (what every supported wire protocol accepts). */
export const TOOL_NAME_PATTERN: RegExp = /^[a-zA-Z0-9_-]{1,128}$/;

/** What a source is opened with: the session it serves. */
export interface ToolSourceContext {
  /** The session's id. */
  sessionId: string;
  /** Real path of the session's workspace. */
  workspace: string;
  /** Real path of the session scratchpad (exists). */
  scratchpad: string;
  /** The confinement of the session's commands (a source that starts processes uses it). */
  sandbox: SandboxPolicy;
  /** Whether the session's model accepts images. */
  vision: boolean;
  /** Diagnostics sink (`[penguin] …` lines). */
  warn: (line: string) => void;
}

/** A source opened for one session: its tools, and how to release them. */
export interface OpenedToolSource {
  /** The tools, in the order offered to the model. */
  tools: readonly Tool<ToolContext>[];
  /** Release what the open took (connections, processes); called once, at dispose. */
  close?(): void | Promise<void>;
  /**
   * Events about the open for the trace (e.g. the MCP connect pair), written
   * on the session's first run, right before `tool_list_ready`.
   */
  records?: readonly EventPayload[];
}

/** Where a session's tools come from. */
export interface ToolSource {
  /** Names the source in warnings (e.g. `builtin`, `mcp:github`). */
  readonly name: string;
  /**
   * Open at the session's first run instead of at its creation (e.g. MCP
   * servers: nothing is started for a session that never runs a task). A
   * lazy source's tools come after those of the sources opened at creation.
   */
  readonly lazy?: boolean;
  /** Open the source for one session. May be slow (it runs in parallel with the other sources). */
  open(ctx: ToolSourceContext): OpenedToolSource | Promise<OpenedToolSource>;
}

/** A source of fixed tools (defined tools are instantiated with their default definitions). */
export function toolSource(
  name: string,
  tools: readonly (Tool<ToolContext> | DefinedTool<ToolContext>)[],
): ToolSource {
  return {
    name,
    open: () => ({ tools: tools.map((t) => ("create" in t ? t.create() : t)) }),
  };
}
