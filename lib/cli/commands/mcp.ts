/**
 * `penguin mcp add|remove|list|test`: the MCP servers of an agent
 * (`tools.mcpServers` in its `system_config.yaml`).
 *
 * @module
 */
import { agentInitOptions } from "../../agent/builtin_tool_config.ts";
import { resolve } from "node:path";
import {
  closeAll,
  connectAll,
  diagnoseStdioFailure,
  mcpSecrets,
  mcpTools,
  serverPolicy,
  stderrLogPath,
} from "../../mcp/mod.ts";
import { maskSecrets } from "../../tools/secret_mask.ts";
import { urlShown } from "../../state/mcp_url_secrets.ts";
import { shownArgs } from "../../state/mcp_arg_secrets.ts";
import { PenguinError } from "../../protocol/errors.ts";
import { createPolicy, isInside, type SandboxPolicy } from "../../sandbox/mod.ts";
import { makeProbeMcpLogDir } from "../../state/paths.ts";
import { envWithApiKeys } from "../../sandbox/api_key_env.ts";
import {
  DEFAULT_AGENT_ID,
  DEFAULT_PROJECT_ID,
  validateAgentId,
  validateProjectId,
} from "../../state/ids.ts";
import {
  addMcpServer,
  checkMcpServer,
  loadOrInitAgent,
  type McpServerConfig,
  parseMcpServers,
  removeMcpServer,
  resolveDataRoot,
} from "../../state/mod.ts";
import { bool, type Flag, flagHelp, type Parsed, parseDeclared, str } from "../args.ts";
import { AGENT_TARGET, JSON_OUTPUT } from "./_common_flags.ts";
import { type Command, type CommandContext, commandGroup } from "../command.ts";
import { createSpinner } from "../render/spinner.ts";
import { formatTable, printHelp } from "./_config_common.ts";
import { safeText } from "../../display/terminal_text.ts";
import { requireWorkspace } from "./_session_flags.ts";

const WORKSPACE_FLAG: Flag = {
  name: "workspace",
  type: "string",
  value: "<dir>",
  help: "the workspace servers run in (default: the current directory)",
};
const ADD_FLAGS: readonly Flag<unknown>[] = [
  {
    name: "env",
    type: "string",
    value: "K=V",
    multiple: true,
    help: "variable for a stdio server (repeatable)",
  },
  {
    name: "url",
    type: "string",
    value: "<url>",
    help: "http:// or https:// endpoint of a remote server",
  },
  {
    name: "header",
    type: "string",
    value: "K:V",
    multiple: true,
    help: "HTTP header for a remote server (repeatable)",
  },
  { name: "sse", type: "boolean", help: "use the SSE transport instead of Streamable HTTP" },
  {
    name: "network",
    type: "string",
    value: "on|off",
    help: "network for a stdio server (default: off)",
  },
  {
    name: "cwd",
    type: "string",
    value: "workspace|<dir>",
    help:
      "where a stdio server starts: workspace (the session's\nworkspace, written as sandbox: cwd: workspace) or a\ndirectory (default: the read-only root, /)",
  },
  {
    name: "writable",
    type: "string",
    value: "<dir>",
    multiple: true,
    help: "extra writable directory for a stdio server (repeatable, absolute)",
  },
  {
    name: "readable",
    type: "string",
    value: "<dir>",
    multiple: true,
    help:
      "directory of your home shown read-only to a stdio server,\ne.g. where it is installed (repeatable)",
  },
  {
    name: "permission",
    type: "string",
    value: "<p>",
    help: "auto (default: read-only tools by their readOnlyHint), r or rw",
  },
  {
    name: "connect-timeout-ms",
    type: "string",
    value: "<ms>",
    help: "time allowed to connect and list tools (default: 10000)",
  },
  { name: "no-test", type: "boolean", help: "save the server without starting it first" },
  { ...WORKSPACE_FLAG, help: "the workspace the test runs in (default: the current directory)" },
  ...AGENT_TARGET,
];
const LIST_FLAGS: readonly Flag<unknown>[] = [
  { ...JSON_OUTPUT, help: "print a JSON object instead of a table" },
  WORKSPACE_FLAG,
  ...AGENT_TARGET,
];
const TEST_FLAGS: readonly Flag<unknown>[] = [
  { ...WORKSPACE_FLAG, help: "the workspace the server runs in (default: the current directory)" },
  ...AGENT_TARGET,
];

const ADD_HELP = `Usage: penguin mcp add <name> [flags] -- <command> [args...]
       penguin mcp add <name> --url <url> [--header K:V]... [--sse] [flags]

Add an MCP server to the agent (tools.mcpServers in its system_config.yaml;
an entry of the same name is replaced). A server given a command is started
over stdio, inside the same sandbox as the model's commands: it starts in
the read-only root (/) unless --cwd, the data root and your home directory
are hidden (--readable shows a home directory to it), it gets no vault
values, and its network is off unless --network on. A server given a URL is
reached over Streamable HTTP (or the older SSE transport with --sse). Its
tools are offered to the model as mcp__<name>__<tool>.

Before saving, the server is started as a session would start it and its
tools are listed; when that fails, nothing is saved and the reason is shown
with what fixes it (exit code 1). --no-test saves without starting it.

Flags:
${flagHelp(ADD_FLAGS, 23)}

Examples:
  penguin mcp add files --network on -- npx -y @modelcontextprotocol/server-filesystem .
  penguin mcp add search --env REGION=eu --network on -- node /opt/search/index.js
  penguin mcp add docs --url https://example.com/mcp --header "X-Api-Key: $KEY"
`;

const REMOVE_HELP = `Usage: penguin mcp remove <name> [--agent-id <id>] [--project-id <id>]

Remove an MCP server from the agent. A name that is not configured is an
error (exit code 1).

Flags:
${flagHelp(AGENT_TARGET, 23)}
`;

const LIST_HELP =
  `Usage: penguin mcp list [--json] [--workspace <dir>] [--agent-id <id>] [--project-id <id>]

Connect to every MCP server of the agent, in parallel and confined as in a
session, and show each server's state and its tools with the names and
permissions the model sees. Servers that fail to connect are listed with the
reason. Exit code 0 even when a server fails (see "mcp test" for a check).

Flags:
${flagHelp(LIST_FLAGS, 23)}
`;

const TEST_HELP =
  `Usage: penguin mcp test <name> [--workspace <dir>] [--agent-id <id>] [--project-id <id>]

Connect to one MCP server, list its tools and report the time taken. Exit
code 0 when it connected, 1 when it did not (with the reason and the end of
its stderr).

Flags:
${flagHelp(TEST_FLAGS, 23)}
`;

interface Target {
  root: string;
  projectId: string;
  agentId: string;
  configPath: string;
}

async function target(ctx: CommandContext, p: Parsed): Promise<Target> {
  const root = resolveDataRoot({ root: ctx.root });
  const projectId = validateProjectId(str(p, "project-id") ?? DEFAULT_PROJECT_ID);
  const agentId = validateAgentId(str(p, "agent-id") ?? DEFAULT_AGENT_ID);
  const agent = await loadOrInitAgent({ root, projectId, agentId }, agentInitOptions());
  return { root, projectId, agentId, configPath: agent.paths.systemConfig };
}

function pairs(cmd: string, flag: string, values: string[], sep: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values) {
    const at = v.indexOf(sep);
    if (at <= 0) {
      throw new PenguinError("usage", `${cmd}: --${flag} ${JSON.stringify(v)}: expected K${sep}V`);
    }
    out[v.slice(0, at).trim()] = v.slice(at + 1).trim();
  }
  return out;
}

function list(p: Parsed, name: string): string[] {
  const v = p.values[name];
  return Array.isArray(v) ? v : [];
}

/** The config of a stdio server: its command, env, network, writable directories and cwd. */
function stdioConfig(
  cmd: string,
  p: Parsed,
  command: string[],
  config: Record<string, unknown>,
): void {
  config.command = command[0];
  if (command.length > 1) config.args = command.slice(1);
  const env = pairs(cmd, "env", list(p, "env"), "=");
  if (Object.keys(env).length > 0) config.env = env;
  const network = str(p, "network");
  const writable = list(p, "writable").map((d) => resolve(d));
  if (network !== undefined && network !== "on" && network !== "off") {
    throw new PenguinError(
      "usage",
      `${cmd}: --network ${JSON.stringify(network)}: expected on or off`,
    );
  }
  const cwd = str(p, "cwd");
  const inWorkspace = cwd === "workspace";
  if (cwd !== undefined && !inWorkspace) config.cwd = resolve(cwd);
  const readable = list(p, "readable").map((d) => homeDir(cmd, d));
  if (network !== undefined || writable.length > 0 || readable.length > 0 || inWorkspace) {
    config.sandbox = {
      ...(network !== undefined ? { network } : {}),
      ...(writable.length > 0 ? { writable } : {}),
      ...(readable.length > 0 ? { readable } : {}),
      ...(inWorkspace ? { cwd: "workspace" } : {}),
    };
  }
}

/** A `--readable` directory: absolute, in the home directory and not the whole of it. */
function homeDir(cmd: string, dir: string): string {
  const home = Deno.env.get("HOME");
  const abs = resolve(dir);
  const bad = (why: string) =>
    new PenguinError("usage", `${cmd}: --readable ${JSON.stringify(dir)}: ${why}`);
  if (!home || resolve(home) === "/") throw bad("HOME is not set");
  if (!isInside(abs, resolve(home))) {
    throw bad(`not in your home directory ${home} (only the home is hidden from servers)`);
  }
  if (abs === resolve(home)) throw bad("is the whole home directory; name the directories needed");
  return abs;
}

async function addCommand(args: string[], ctx: CommandContext): Promise<number> {
  const cmd = "mcp add";
  const p = parseDeclared(cmd, args, ADD_FLAGS);
  if (bool(p, "help")) return printHelp(ctx, ADD_HELP);
  const [name, ...command] = p.positionals;
  if (!name) throw new PenguinError("usage", `${cmd}: give the server a name`);
  const url = str(p, "url");
  const config: Record<string, unknown> = {};
  if (url !== undefined) {
    if (command.length > 0) {
      throw new PenguinError("usage", `${cmd}: give either --url or a command after --, not both`);
    }
    if (str(p, "cwd") !== undefined) {
      throw new PenguinError("usage", `${cmd}: --cwd applies to stdio servers only`);
    }
    for (const flag of ["env", "writable"]) {
      if (list(p, flag).length > 0) {
        throw new PenguinError("usage", `${cmd}: --${flag} applies to stdio servers only`);
      }
    }
    if (str(p, "network") !== undefined) {
      throw new PenguinError("usage", `${cmd}: --network applies to stdio servers only`);
    }
    if (bool(p, "sse")) config.transport = "sse";
    config.url = url;
    const headers = pairs(cmd, "header", list(p, "header"), ":");
    if (Object.keys(headers).length > 0) config.headers = headers;
  } else {
    if (command.length === 0) {
      throw new PenguinError(
        "usage",
        `${cmd}: give the server's command after -- (e.g. penguin mcp add files --network on -- npx -y @modelcontextprotocol/server-filesystem .) or --url`,
      );
    }
    if (list(p, "header").length > 0 || bool(p, "sse")) {
      throw new PenguinError("usage", `${cmd}: --header and --sse apply to --url servers only`);
    }
    stdioConfig(cmd, p, command, config);
  }
  const permission = str(p, "permission");
  if (permission !== undefined) config.permission = permission;
  const timeout = str(p, "connect-timeout-ms");
  if (timeout !== undefined) {
    const ms = Number(timeout);
    if (!Number.isInteger(ms) || ms <= 0) {
      throw new PenguinError(
        "usage",
        `${cmd}: --connect-timeout-ms ${JSON.stringify(timeout)}: expected a positive whole number`,
      );
    }
    config.connectTimeoutMs = ms;
  }
  checkMcpServer(name, config);
  const t = await target(ctx, p);
  let found = "";
  if (!bool(p, "no-test")) {
    const x = await testBeforeSaving(cmd, ctx, p, t, name, config);
    if (x === undefined) return 1;
    found = `: connected in ${seconds(x.durationMs)}, ${toolsFound(x)}`;
  }
  const replaced = await addMcpServer(t.configPath, name, config);
  ctx.io.out(
    safeText(`${replaced ? "Replaced" : "Added"} MCP server ${name} for agent ${t.agentId}`) +
      (found ? safeText(found) : `. Check it with: penguin mcp test ${name}`) + "\n",
  );
  return 0;
}

/** `N tool(s): a, b, c` (the first 20 names). */
function toolsFound(x: Probe): string {
  const names = x.tools.map((tool) => tool.name);
  const shown = names.slice(0, 20).join(", ") + (names.length > 20 ? ", …" : "");
  return `${names.length} tool(s)${names.length > 0 ? `: ${shown}` : ""}`;
}

/**
 * Start the server `mcp add` is about to save, as a session would, and list
 * its tools. On failure it prints why (with the fix, when known) and returns
 * undefined: nothing is saved.
 */
async function testBeforeSaving(
  cmd: string,
  ctx: CommandContext,
  p: Parsed,
  t: Target,
  name: string,
  config: Record<string, unknown>,
): Promise<Probe | undefined> {
  const [x] = await probe(cmd, ctx, p, t, [checkMcpServer(name, config)]);
  if (x!.status === "connected") return x;
  // The server's error and stderr are its own text: shown without escape sequences.
  ctx.io.err(
    safeText(`penguin: MCP server ${name} failed to start: ${x!.error}\n`) +
      (x!.hint ? safeText(`  fix: ${x!.hint}\n`) : "") +
      (x!.stderrTail ? safeText(`Its stderr ended with:\n${x!.stderrTail}\n`) : "") +
      `Nothing was saved. Fix it and run mcp add again, or add --no-test to save it untested.\n`,
  );
  return undefined;
}

async function removeCommand(args: string[], ctx: CommandContext): Promise<number> {
  const cmd = "mcp remove";
  const p = parseDeclared(cmd, args, AGENT_TARGET, 1);
  if (bool(p, "help")) return printHelp(ctx, REMOVE_HELP);
  const name = p.positionals[0];
  if (!name) throw new PenguinError("usage", `${cmd}: which server? give its name`);
  const t = await target(ctx, p);
  if (!(await removeMcpServer(t.configPath, name))) {
    throw new PenguinError(
      "not_found",
      `${cmd}: agent ${t.agentId} has no MCP server ${JSON.stringify(name)} (${t.configPath})`,
    );
  }
  ctx.io.out(`Removed MCP server ${name} from agent ${t.agentId}.\n`);
  return 0;
}

/** The agent's servers, with the configuration warnings printed. */
async function configured(ctx: CommandContext, t: Target): Promise<McpServerConfig[]> {
  const agent = await loadOrInitAgent(
    { root: t.root, projectId: t.projectId, agentId: t.agentId },
    agentInitOptions(),
  );
  const entries = agent.systemConfig.tools?.mcpServers ?? [];
  const { servers, warnings } = await parseMcpServers(entries, t.configPath);
  for (const w of warnings) ctx.io.err(`penguin: warning: ${w}\n`);
  return servers;
}

interface Probe {
  server: McpServerConfig;
  status: "connected" | "failed";
  durationMs: number;
  error?: string;
  tools: { name: string; mcpName: string; permission: string; description: string }[];
  stderrTail?: string;
  /** Why a failed stdio server failed, with the fix (see lib/mcp/diagnose.ts). */
  hint?: string;
}

async function probe(
  cmd: string,
  ctx: CommandContext,
  p: Parsed,
  t: Target,
  servers: McpServerConfig[],
): Promise<Probe[]> {
  const dir = resolve(str(p, "workspace") ?? Deno.cwd());
  await requireWorkspace(cmd, dir);
  const workspace = await Deno.realPath(dir);
  const logDir = await makeProbeMcpLogDir(t);
  try {
    const policy = createPolicy({ workspace, dataRoot: t.root });
    const warnings: string[] = [];
    // A server's env and header values are secrets wherever they show, its own errors included;
    // so are the vault's, the API keys and every other server entry's: a server started in the
    // workspace may print a file a command wrote one into (attack round 19 mcpsecrets #12, #13).
    const { snapshotSecrets } = await import("../../agent/snapshot_known_secrets.ts");
    const known = await snapshotSecrets(
      { root: t.root, projectId: t.projectId, agentId: t.agentId },
      await envWithApiKeys(),
    ).catch(() => []);
    const secrets = [...mcpSecrets(servers), ...known];
    const mask = (text: string) => maskSecrets(text, secrets);
    // Connecting can take seconds: a spinner on stderr when it is a terminal (never with --json).
    const spinner = ctx.io.errIsTty && !bool(p, "json") && servers.length > 0
      ? createSpinner({
        write: (text) => ctx.io.err(text),
        label: `connecting to ${servers.map((s) => s.name).join(", ")}…`,
      })
      : undefined;
    spinner?.start();
    const { connections, results } = await connectAll(
      servers,
      { policy, logDir },
      (line) => warnings.push(mask(line)),
    ).finally(() => spinner?.stop());
    try {
      const tools = mcpTools(
        connections,
        (line) => ctx.io.err(`${mask(line)}\n`),
        new Set(),
        mask,
      );
      return await Promise.all(servers.map(async (server, i) => {
        const r = results[i]!;
        const prefix = `mcp__${server.name}__`;
        const stderr = mask(
          await Deno.readTextFile(stderrLogPath(logDir, server.name)).catch(() => ""),
        );
        const hint = r.status !== "completed"
          ? await hintFor(server, policy, workspace)
          : undefined;
        return {
          server,
          status: r.status === "completed" ? "connected" : "failed",
          durationMs: r.duration_ms,
          ...(r.error !== undefined ? { error: mask(r.error) } : {}),
          tools: tools.filter((tool) => tool.definition.name.startsWith(prefix)).map((tool) => ({
            name: tool.definition.name.slice(prefix.length),
            mcpName: tool.definition.name,
            permission: tool.definition.permission,
            description: tool.definition.description,
          })),
          ...(stderr.trim()
            ? { stderrTail: mask(stderr.trimEnd().split("\n").slice(-10).join("\n")) }
            : {}),
          ...(hint !== undefined ? { hint: mask(hint) } : {}),
        } satisfies Probe;
      }));
    } finally {
      await closeAll(connections);
    }
  } finally {
    await Deno.remove(logDir, { recursive: true }).catch(() => {});
  }
}

/** Why a failed server failed, with the fix, when that is known. */
async function hintFor(
  server: McpServerConfig,
  policy: SandboxPolicy,
  workspace: string,
): Promise<string | undefined> {
  if (server.transport !== "stdio") {
    return `check that ${urlShown(server.url)} is right and the server is running`;
  }
  const own = serverPolicy(server, policy);
  return await diagnoseStdioFailure(server, own, workspace).catch(() => undefined);
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/**
 * The server's command line or URL, each URL shown as `scheme://host[:port]/…`
 * (lib/state/mcp_url_secrets.ts), every other secret argument elided (`…`,
 * lib/state/mcp_arg_secrets.ts), and what is left masked like its env and
 * header values.
 */
function whereOf(server: McpServerConfig): string {
  const where = server.transport === "stdio"
    ? [server.command, ...shownArgs(server.args, server.cwd)].join(" ")
    : `${urlShown(server.url)}${server.transport === "sse" ? " (sse)" : ""}`;
  return maskSecrets(where, mcpSecrets([server]));
}

async function listCommand(args: string[], ctx: CommandContext): Promise<number> {
  const cmd = "mcp list";
  const p = parseDeclared(cmd, args, LIST_FLAGS, 0);
  if (bool(p, "help")) return printHelp(ctx, LIST_HELP);
  const t = await target(ctx, p);
  const servers = await configured(ctx, t);
  const probes = await probe(cmd, ctx, p, t, servers);
  if (bool(p, "json")) {
    const out = {
      servers: probes.map((x) => ({
        name: x.server.name,
        transport: x.server.transport,
        status: x.status,
        duration_ms: x.durationMs,
        ...(x.error !== undefined ? { error: x.error } : {}),
        tools: x.tools.map((tool) => ({
          name: tool.mcpName,
          server_tool: tool.name,
          permission: tool.permission,
          description: tool.description,
        })),
      })),
    };
    ctx.io.out(JSON.stringify(out, null, 2) + "\n");
    return 0;
  }
  if (probes.length === 0) {
    ctx.io.out(
      `Agent ${t.agentId} has no MCP servers. Add one with: penguin mcp add <name> -- <command> [args...]\n`,
    );
    return 0;
  }
  for (const x of probes) {
    const state = x.status === "connected"
      ? `connected in ${seconds(x.durationMs)}, ${x.tools.length} tool(s)`
      : `failed: ${x.error}${x.hint ? `\n  fix: ${x.hint}` : ""}`;
    ctx.io.out(
      safeText(`${x.server.name}  ${x.server.transport}  ${whereOf(x.server)}\n  ${state}\n`),
    );
    if (x.tools.length > 0) {
      const rows = x.tools.map((tool) => [`  ${tool.mcpName}`, tool.permission]);
      ctx.io.out(formatTable([["  TOOL", "PERMISSION"], ...rows]));
    }
  }
  return 0;
}

async function testCommand(args: string[], ctx: CommandContext): Promise<number> {
  const cmd = "mcp test";
  const p = parseDeclared(cmd, args, TEST_FLAGS, 1);
  if (bool(p, "help")) return printHelp(ctx, TEST_HELP);
  const name = p.positionals[0];
  if (!name) throw new PenguinError("usage", `${cmd}: which server? give its name`);
  const t = await target(ctx, p);
  const server = (await configured(ctx, t)).find((s) => s.name === name);
  if (!server) {
    throw new PenguinError(
      "not_found",
      `${cmd}: agent ${t.agentId} has no MCP server ${JSON.stringify(name)} (see penguin mcp list)`,
    );
  }
  const [x] = await probe(cmd, ctx, p, t, [server]);
  if (x!.status === "failed") {
    // The server's error and stderr are its own text: shown without escape sequences.
    ctx.io.err(
      safeText(`penguin: MCP server ${name} failed after ${seconds(x!.durationMs)}: ${x!.error}\n`),
    );
    if (x!.hint) ctx.io.err(safeText(`  fix: ${x!.hint}\n`));
    if (x!.stderrTail) ctx.io.err(safeText(`Its stderr ended with:\n${x!.stderrTail}\n`));
    return 1;
  }
  ctx.io.out(
    `MCP server ${name} connected in ${seconds(x!.durationMs)} (${server.transport}), ${
      x!.tools.length
    } tool(s):\n`,
  );
  for (const tool of x!.tools) ctx.io.out(safeText(`  ${tool.mcpName}  ${tool.permission}\n`));
  return 0;
}

/** The `mcp` commands. */
export const mcpCommands: Command[] = commandGroup(["mcp"], [
  ["add", "add an MCP server to an agent", ADD_HELP, addCommand],
  ["remove", "remove an MCP server from an agent", REMOVE_HELP, removeCommand],
  ["list", "connect to an agent's MCP servers and list their tools", LIST_HELP, listCommand],
  ["test", "connect to one MCP server and report its tools and timing", TEST_HELP, testCommand],
]);
