/**
 * MCP server entries of an agent's `system_config.yaml`
 * (`tools.mcpServers: [{name, config}]`), in PenguinHarness's format plus a
 * `sandbox` block of penguin's own:
 *
 * ```yaml
 * tools:
 *   mcpServers:
 *     - name: files
 *       config:
 *         command: npx                       # stdio; `url:` means Streamable HTTP
 *         args: [-y, "@modelcontextprotocol/server-filesystem", "."]
 *         env: { LOG_LEVEL: warn }
 *         connectTimeoutMs: 10000
 *         permission: auto                   # auto | r | rw
 *         sandbox: { network: off, writable: [/srv/cache], cwd: workspace }
 * ```
 *
 * `sandbox.readable` lists directories of the home directory (hidden from
 * every sandbox) shown read-only to this server alone, e.g. where the server
 * is installed; the home's secrets stay hidden within them.
 *
 * A stdio server starts in its `cwd`, else in the read-only root; `sandbox.cwd:
 * workspace` starts it in the session's workspace instead (for a server that
 * works on "."), where the model may have written what its runtime loads.
 *
 * The transport is `stdio` when the entry has `command`, Streamable HTTP
 * (`http`) when it has `url`, and `sse` only when `transport: sse` is
 * written. A malformed entry never stops a session: {@linkcode parseMcpServers}
 * returns it as a warning, and the other servers still load.
 *
 * Editing the file (`penguin mcp add|remove`) and locating an entry's line
 * need the YAML library: they are in mcp_servers_yaml.ts and
 * _mcp_entry_lines.ts, loaded only then.
 *
 * @module
 */
import { isAbsolute } from "node:path";
import { z } from "zod";
import { PenguinError } from "../protocol/errors.ts";

/** A server name: letters, digits, `_` and `-`, starting with a letter or digit. */
export const MCP_SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** The transports an MCP server can be reached by. */
export type McpTransport = "stdio" | "http" | "sse";

/** How a server's tools are approved: from each tool's `readOnlyHint`, or forced. */
export type McpPermission = "auto" | "r" | "rw";

/** Default time allowed to connect and list tools. */
export const MCP_CONNECT_TIMEOUT_MS = 10_000;

/** Settings every transport shares. */
interface McpCommon {
  /** Server name, used in tool names `mcp__<name>__<tool>`. */
  name: string;
  /** Time allowed to connect and list tools. */
  connectTimeoutMs: number;
  /** Per-call time limit; undefined means the tool default. ≤0 disables it. */
  timeoutMs?: number;
  /** Output cap in characters; undefined means the tool default. ≤0 disables it. */
  maxOutputLength?: number;
  /** Approval of the server's tools. */
  permission: McpPermission;
}

/** A server started as a child process and spoken to over stdin/stdout. */
export interface McpStdioServer extends McpCommon {
  /** Started as a child process, spoken to over stdin/stdout. */
  transport: "stdio";
  /** The program. */
  command: string;
  /** Its arguments. */
  args: string[];
  /** Variables set for the server (on top of the sandbox's safe environment; never the vault). */
  env: Record<string, string>;
  /** Working directory; default the workspace. */
  cwd?: string;
  /** Confinement beyond the workspace. */
  sandbox: {
    network: boolean;
    writable: string[];
    /** Home directories shown read-only to this server (the home's secrets stay hidden). */
    readable: string[];
    /** Start in the session's workspace when the entry names no `cwd`. */
    workspaceCwd: boolean;
  };
}

/** A server reached over HTTP (Streamable HTTP, or the older SSE transport). */
export interface McpRemoteServer extends McpCommon {
  /** Streamable HTTP, or the older SSE transport. */
  transport: "http" | "sse";
  /** The endpoint. */
  url: string;
  /** Headers sent with every request (e.g. Authorization). */
  headers: Record<string, string>;
}

/** One valid `tools.mcpServers` entry. */
export type McpServerConfig = McpStdioServer | McpRemoteServer;

/** The outcome of reading the entries: the valid servers and one warning per skipped entry. */
export interface McpServersResult {
  /** The valid servers, in order. */
  servers: McpServerConfig[];
  /** One line per skipped entry. */
  warnings: string[];
}

const stringMap = z.record(z.string(), z.string(), { error: "expected a mapping of strings" });
const onOff = z.union([z.boolean(), z.enum(["on", "off"])], { error: "expected on or off" })
  .transform((v) => v === true || v === "on");

const configSchema = z.looseObject({
  transport: z.enum(["stdio", "http", "sse"], { error: "expected stdio, http or sse" }).optional(),
  command: z.string({ error: "expected a non-empty command" }).min(1, {
    error: "expected a non-empty command",
  }).optional(),
  args: z.array(z.string(), { error: "expected a list of strings" }).optional(),
  env: stringMap.optional(),
  cwd: z.string().refine(isAbsolute, { error: "expected an absolute path" }).optional(),
  url: z.url({ protocol: /^https?$/, error: "expected an http:// or https:// URL" }).optional(),
  headers: stringMap.optional(),
  connectTimeoutMs: z.number({ error: "expected a number of milliseconds" }).int().positive()
    .optional(),
  timeoutMs: z.number({ error: "expected a number of milliseconds" }).int().optional(),
  maxOutputLength: z.number({ error: "expected a number of characters" }).int().optional(),
  permission: z.enum(["auto", "r", "rw"], { error: "expected auto, r or rw" }).optional(),
  sandbox: z.strictObject({
    network: onOff.optional(),
    writable: z.array(
      z.string().refine(isAbsolute, { error: "expected absolute paths" }),
      { error: "expected a list of absolute paths" },
    ).optional(),
    readable: z.array(
      z.string().refine(isAbsolute, { error: "expected absolute paths" }),
      { error: "expected a list of absolute paths" },
    ).optional(),
    cwd: z.literal("workspace", { error: "expected workspace (or leave it out)" }).optional(),
  }, { error: "expected a mapping with network, writable, readable and cwd" }).optional(),
}, { error: "expected a mapping" });

function problemOf(error: z.ZodError): string {
  const issue = error.issues[0]!;
  const path = issue.path.map(String).join(".");
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** Read one entry, or say why it is skipped. */
function parseEntry(entry: unknown): McpServerConfig | string {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
    return "expected a mapping with name and config";
  }
  const { name, config } = entry as { name?: unknown; config?: unknown };
  if (name === undefined || name === null) {
    return `no name (give the entry a name: letters, digits, "_" and "-")`;
  }
  if (typeof name !== "string" || !MCP_SERVER_NAME.test(name)) {
    return `name ${JSON.stringify(name)} must match ${MCP_SERVER_NAME.source}`;
  }
  const parsed = configSchema.safeParse(config ?? {});
  if (!parsed.success) return `${name}: config.${problemOf(parsed.error)}`;
  const c = parsed.data;
  const common = {
    name,
    connectTimeoutMs: c.connectTimeoutMs ?? MCP_CONNECT_TIMEOUT_MS,
    permission: c.permission ?? "auto",
    ...(c.timeoutMs !== undefined ? { timeoutMs: c.timeoutMs } : {}),
    ...(c.maxOutputLength !== undefined ? { maxOutputLength: c.maxOutputLength } : {}),
  } satisfies McpCommon;
  const transport = c.transport ?? (c.command ? "stdio" : c.url ? "http" : undefined);
  if (transport === undefined) return `${name}: config needs a command (stdio) or a url (http)`;
  if (transport === "stdio") {
    if (!c.command) return `${name}: the stdio transport needs config.command`;
    if (c.url) return `${name}: config has both command and url; keep one`;
    return {
      ...common,
      transport,
      command: c.command,
      args: c.args ?? [],
      env: c.env ?? {},
      ...(c.cwd !== undefined ? { cwd: c.cwd } : {}),
      sandbox: {
        network: c.sandbox?.network ?? false,
        writable: c.sandbox?.writable ?? [],
        readable: c.sandbox?.readable ?? [],
        workspaceCwd: c.sandbox?.cwd === "workspace",
      },
    };
  }
  if (!c.url) return `${name}: the ${transport} transport needs config.url`;
  if (c.command) return `${name}: config has both command and url; keep one`;
  if (c.sandbox) return `${name}: config.sandbox applies to stdio servers only`;
  return { ...common, transport, url: c.url, headers: c.headers ?? {} };
}

/** The entries' valid servers, and why each other entry is skipped (by its index). */
function checkMcpEntries(
  entries: readonly unknown[],
): { servers: McpServerConfig[]; skipped: { index: number; reason: string }[] } {
  const servers: McpServerConfig[] = [];
  const skipped: { index: number; reason: string }[] = [];
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    const server = parseEntry(entry);
    if (typeof server === "string") skipped.push({ index, reason: server });
    else if (seen.has(server.name)) {
      skipped.push({ index, reason: `the name ${server.name} is used twice` });
    } else {
      seen.add(server.name);
      servers.push(server);
    }
  });
  return { servers, skipped };
}

/** The valid servers of `tools.mcpServers` (see {@linkcode parseMcpServers}), without warnings. */
export function mcpServerConfigs(entries: readonly unknown[]): McpServerConfig[] {
  return checkMcpEntries(entries).servers;
}

/**
 * Read `tools.mcpServers`. Invalid entries and repeated names are skipped,
 * each with a warning naming the entry (`file` says where it came from:
 * the file is read, and its YAML parser loaded, only when a warning needs
 * a line).
 */
export async function parseMcpServers(
  entries: readonly unknown[],
  file: string,
): Promise<McpServersResult> {
  const { servers, skipped } = checkMcpEntries(entries);
  if (skipped.length === 0) return { servers, warnings: [] };
  const at = await (await import("./_mcp_entry_lines.ts")).mcpEntryLines(file);
  const warnings = skipped.map(({ index, reason }) =>
    `${at(index)}: tools.mcpServers[${index}]: ${reason}; server skipped`
  );
  return { servers, warnings };
}

/** The `config` mapping written for a server by `addMcpServer` (mcp_servers_yaml.ts). */
export type McpServerEntryConfig = Record<string, unknown>;

/** The server an entry `{name, config}` describes; a usage error saying what is wrong otherwise. */
export function checkMcpServer(name: string, config: McpServerEntryConfig): McpServerConfig {
  if (!MCP_SERVER_NAME.test(name)) {
    throw new PenguinError(
      "usage",
      `Invalid MCP server name ${
        JSON.stringify(name)
      }: use letters, digits, _ and -, starting with a letter or digit`,
    );
  }
  const server = parseEntry({ name, config });
  if (typeof server === "string") {
    throw new PenguinError("usage", `Invalid MCP server: ${server}`);
  }
  return server;
}
