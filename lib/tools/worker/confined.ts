/**
 * The file tools as proxies: read_file, write_file, edit_file and the file
 * half of read_image never run in penguin's own thread.
 *
 * - Under an OS sandbox (the default) every call runs in the session's
 *   sandboxed tool host (`../host/client.ts`): a copy of penguin inside the
 *   same bubblewrap (or Seatbelt) confinement as the model's commands, where
 *   paths resolve in the sandbox's mount view at the moment of the open. A
 *   symlink swapped in by a racing command can only lead where a command can
 *   already go; the data root and secrets do not exist there.
 * - In that host, and with `--sandbox off` in penguin itself, each call runs
 *   in a Worker whose Deno permissions are read/write of exactly the call's
 *   workspace and session scratchpad, with no net, run, env, ffi or sys. The
 *   realpath containment check (`workspace_path.ts`) runs inside it too.
 *
 * With `--sandbox read-only` the writing tools are refused before they run
 * (and the read-only mounts would refuse the write anyway).
 *
 * The proxies are drop-in {@linkcode Tool}s: same definitions, same events,
 * same outputs as the in-process tools.
 *
 * @module
 */
import {
  createToolHost,
  type HostedToolContext,
  type ToolHost,
  type ToolHostOptions,
} from "../host/client.ts";
import type { DefinedTool } from "../define.ts";
import { editFileTool } from "../edit_file.ts";
import { readFileTool } from "../read_file.ts";
import { createReadImageTool, readImageTool } from "../read_image.ts";
import { writeFileTool } from "../write_file.ts";
import type { FileToolContext, Tool, ToolDefinition, ToolEvent, ToolFactory } from "../tool.ts";
import { FILE_WORKER_URL } from "./file_worker_url.ts";
import { createToolWorkerPool, type ToolWorkerPool, type ToolWorkerPoolOptions } from "./pool.ts";

export { FILE_WORKER_URL };

const CONFINED: readonly DefinedTool<FileToolContext>[] = [
  readFileTool,
  writeFileTool,
  editFileTool,
  readImageTool,
];

/** The tools served by the file worker. */
export const CONFINED_FILE_TOOLS: readonly string[] = Object.freeze(CONFINED.map((t) => t.name));

/** The confined tools that change files: refused in a read-only sandbox. */
const WRITING_TOOLS: ReadonlySet<string> = new Set(["write_file", "edit_file"]);

/** Proxy factories for the confined file tools, sharing one worker pool and one tool host. */
export interface ConfinedFileTools {
  /** Tool name → factory, for the names in {@linkcode CONFINED_FILE_TOOLS}. */
  factories: Readonly<Record<string, ToolFactory<HostedToolContext>>>;
  /** The pool the proxies run in when the sandbox is off. */
  pool: ToolWorkerPool;
  /** The sandboxed hosts the proxies run in otherwise. */
  host: ToolHost;
  /** Stop the workers and the hosts (idle ones also end by themselves). */
  dispose(): Promise<void>;
}

/** Options of {@linkcode confinedFileTools}. */
export interface ConfinedFileToolsOptions extends ToolWorkerPoolOptions {
  /** Options of the sandboxed tool host. */
  host?: ToolHostOptions;
}

/** A tool whose `run` is forwarded to `pool`; events stream back, aborts are forwarded. */
export function proxyTool(
  pool: ToolWorkerPool,
  definition: ToolDefinition,
): Tool<FileToolContext> {
  return { definition, run: (args, ctx) => pool.run(definition, args, ctx) };
}

function pathOf(args: Record<string, unknown>): string {
  const p = args["file_path"];
  return typeof p === "string" ? p : "";
}

async function* readOnlyRefusal(
  definition: ToolDefinition,
  args: Record<string, unknown>,
): AsyncGenerator<ToolEvent> {
  yield {
    type: "delta",
    text:
      `Refusing to ${definition.name === "edit_file" ? "edit" : "write"} "${
        pathOf(args)
      }": this session's sandbox is read-only (--sandbox read-only), so no tool ` +
      "may change files. Report the change you would make instead.",
  };
  yield { type: "result", status: "failed" };
}

function isUrl(args: Record<string, unknown>): boolean {
  const s = args["source"];
  return typeof s === "string" && /^\s*[a-z][a-z0-9+.-]*:\/\//i.test(s);
}

/**
 * Proxy factories for the confined file tools. Each call runs where the
 * call's `ctx.sandbox` says: in the sandboxed tool host, or (sandbox `off`)
 * in a worker confined to `ctx.workspace` and `ctx.scratchpad`.
 */
export function confinedFileTools(opts: ConfinedFileToolsOptions = {}): ConfinedFileTools {
  const { host: hostOpts, ...poolOpts } = opts;
  const pool = createToolWorkerPool(FILE_WORKER_URL, { name: "penguin-file-tools", ...poolOpts });
  const host = createToolHost(hostOpts);
  const route = (
    definition: ToolDefinition,
    args: Record<string, unknown>,
    ctx: HostedToolContext,
  ): AsyncIterable<ToolEvent> => {
    const mode = ctx.sandbox?.mode ?? "workspace-write";
    if (mode === "read-only" && WRITING_TOOLS.has(definition.name)) {
      return readOnlyRefusal(definition, args);
    }
    // A URL image is fetched by penguin itself (the sandbox has no network).
    if (definition.name === "read_image" && isUrl(args)) {
      return createReadImageTool(definition).run(args, ctx);
    }
    if (mode === "off") return pool.run(definition, args, ctx);
    return host.run(definition, args, ctx);
  };
  const factories: Record<string, ToolFactory<HostedToolContext>> = {};
  for (const { name, preview, checkArgs } of CONFINED) {
    factories[name] = (definition: ToolDefinition) => ({
      definition,
      run: (args, ctx) => route(definition, args, ctx),
      checkArgs: (args) => checkArgs(definition, args),
      ...(preview ? { preview } : {}),
    });
  }
  return {
    factories: Object.freeze(factories),
    pool,
    host,
    dispose: async () => {
      pool.dispose();
      await host.dispose();
    },
  };
}
