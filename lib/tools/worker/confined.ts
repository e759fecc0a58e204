/**
 * The file tools as proxies: read_file, write_file and edit_file run in a
 * Worker whose Deno permissions are read/write of exactly the call's
 * workspace and session scratchpad, with no net, run, env, ffi or sys. The
 * realpath containment check (`workspace_path.ts`) still runs inside the
 * worker — Deno path permissions do not resolve symlinks — so the worker is
 * the second layer: a bug in a tool cannot reach outside either.
 *
 * The proxies are drop-in {@linkcode Tool}s: same definitions, same events,
 * same outputs as the in-process tools (a path outside the roots is reported
 * with its lexical form, since the worker cannot even resolve it).
 *
 * @module
 */
import type { Tool, ToolDefinition, ToolFactory } from "../tool.ts";
import { createToolWorkerPool, type ToolWorkerPool, type ToolWorkerPoolOptions } from "./pool.ts";

/** The worker entry module of the confined file tools. */
export const FILE_WORKER_URL: URL = new URL("./file_worker.ts", import.meta.url);

/** The tools served by the file worker. */
export const CONFINED_FILE_TOOLS: readonly string[] = Object.freeze([
  "read_file",
  "write_file",
  "edit_file",
]);

/** Proxy factories for the confined file tools, sharing one worker pool. */
export interface ConfinedFileTools {
  /** Tool name → factory, for the names in {@linkcode CONFINED_FILE_TOOLS}. */
  factories: Readonly<Record<string, ToolFactory>>;
  /** The pool the proxies run in. */
  pool: ToolWorkerPool;
  /** Terminate the workers (idle ones also end by themselves). */
  dispose(): void;
}

/** A tool whose `run` is forwarded to `pool`; events stream back, aborts are forwarded. */
export function proxyTool(pool: ToolWorkerPool, definition: ToolDefinition): Tool {
  return { definition, run: (args, ctx) => pool.run(definition, args, ctx) };
}

/**
 * Proxy factories for read_file, write_file and edit_file. Each call runs in
 * a worker confined to that call's `ctx.workspace` and `ctx.scratchpad`.
 */
export function confinedFileTools(opts: ToolWorkerPoolOptions = {}): ConfinedFileTools {
  const pool = createToolWorkerPool(FILE_WORKER_URL, { name: "penguin-file-tools", ...opts });
  const factories: Record<string, ToolFactory> = {};
  for (const name of CONFINED_FILE_TOOLS) {
    factories[name] = (definition: ToolDefinition) => proxyTool(pool, definition);
  }
  return { factories: Object.freeze(factories), pool, dispose: () => pool.dispose() };
}
