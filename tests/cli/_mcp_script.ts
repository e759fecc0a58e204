/**
 * A Python stdio MCP server of a test's own through `penguin run`: the script's frame (the
 * JSON-RPC line loop, `initialize` and the empty answers) and a data root whose default agent
 * runs it, the scripted model answering a test's turns.
 *
 * @module
 */
import { join } from "node:path";
import { addServerModel } from "../support/roots.ts";
import { addMcpServer } from "../../lib/state/mod.ts";
import {
  type ModelServer,
  type RecordedRequest,
  type ScriptedTurn,
  startModelServer,
} from "../support/model_server.ts";
import { initDefaultAgent } from "../support/mcp.ts";

/**
 * A stdio MCP server in Python: `defs` (top-level code; `MODE` and `send(o)` are defined before
 * it) and `branches` (`elif meth == …:` lines, indented four spaces, answering by `send`) go
 * into the frame that answers `initialize` as server "j" and anything else with `{}`.
 */
export function mcpServerScript(defs: string, branches: string): string {
  return `
import json, os, sys
MODE = os.environ["MODE"]
def send(o):
    sys.stdout.write(json.dumps(o) + "\\n"); sys.stdout.flush()
${defs.trim()}
for line in sys.stdin:
    m = json.loads(line); mid = m.get("id"); meth = m.get("method")
    if mid is None: continue
    if meth == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "j", "version": "1"}}})
${branches.replace(/^\n+|\s+$/g, "")}
    else:
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
`;
}

/** Where a run with {@linkcode mcpScriptRoot}'s servers takes place; disposing removes it all. */
export interface McpScriptRoot {
  root: string;
  ws: string;
  server: ModelServer;
  [Symbol.asyncDispose](): Promise<void>;
}

/** What {@linkcode mcpScriptRoot} sets up. */
export interface McpScriptOptions {
  prefix: string;
  /** The server's Python text ({@linkcode mcpServerScript}). */
  script: string;
  /** The names of the servers, each running the script. */
  names: string[];
  env: Record<string, string>;
  apiKey: string;
  /** The model's answers, in order. */
  turns: ScriptedTurn[];
}

/**
 * A temp dir under /var/tmp (the servers' sandbox has a private /tmp) holding the data root
 * `root` and the workspace `ws`, the script run with `env` as each of `names`, the scripted
 * model answering `turns`.
 */
export async function mcpScriptRoot(opts: McpScriptOptions): Promise<McpScriptRoot> {
  const dir = await Deno.makeTempDir({ dir: "/var/tmp", prefix: opts.prefix });
  const queue = [...opts.turns];
  const server = await startModelServer({ handler: () => queue.shift(), maxRequests: 10 });
  const dispose = async () => {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  };
  try {
    const root = join(dir, "root");
    const ws = join(dir, "ws");
    await Deno.mkdir(ws);
    const script = join(dir, "server.py");
    await Deno.writeTextFile(script, opts.script);
    await addServerModel(root, server, { api_key: opts.apiKey });
    const config = await initDefaultAgent(root);
    for (const name of opts.names) {
      await addMcpServer(config, name, {
        command: "python3",
        args: ["-u", script],
        env: opts.env,
        connectTimeoutMs: 120_000,
      });
    }
    return { root, ws, server, [Symbol.asyncDispose]: dispose };
  } catch (e) {
    await dispose();
    throw e;
  }
}

/** The names of the MCP tools a model request offers. */
export function mcpToolNames(req: RecordedRequest): string[] {
  const tools = (req.body as { tools?: { name?: string; function?: { name: string } }[] }).tools;
  return (tools ?? []).map((t) => t.function?.name ?? t.name ?? "").filter((n) =>
    n.startsWith("mcp__")
  );
}
