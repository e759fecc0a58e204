/**
 * `penguin memory list|show|clear`: what an agent's model has saved in its
 * memory (`agent_state/memory/user/` and one directory per workspace).
 * Files are read the way sessions read them: a symbolic link or a file that
 * is not a regular one is refused, never followed.
 *
 * @module
 */
import { resolve } from "node:path";
import { PenguinError } from "../../protocol/errors.ts";
import { exists } from "../../state/_fs.ts";
import {
  type AgentPaths,
  agentPaths,
  type AgentRef,
  clearMemoryScope,
  DEFAULT_AGENT_ID,
  DEFAULT_PROJECT_ID,
  listMemoryScopes,
  listMemoryTopics,
  MEMORY_INDEX,
  type MemoryScope,
  readMemoryFile,
  resolveDataRoot,
  validateAgentId,
  validateProjectId,
  workspaceMemoryDir,
} from "../../state/mod.ts";
import { bool, type Flag, flagHelp, type Parsed, parseDeclared, str } from "../args.ts";
import { AGENT_TARGET, JSON_OUTPUT } from "./_common_flags.ts";
import { type Command, type CommandContext, commandGroup } from "../command.ts";
import { confirmed } from "./_confirm.ts";
import { formatTable, printHelp } from "./_config_common.ts";
import { safeText } from "../../display/terminal_text.ts";
import { maskSecrets } from "../../tools/secret_mask.ts";
import { knownSecrets } from "../../agent/import_mask.ts";

const WORKSPACE: Flag = {
  name: "workspace",
  type: "string",
  value: "<dir>",
  help: "the memory of this workspace instead of the user memory",
};
const LIST_FLAGS: readonly Flag<unknown>[] = [
  { ...WORKSPACE, help: "only the user memory and this workspace's memory" },
  { ...JSON_OUTPUT, help: "print a JSON object instead of a table" },
  ...AGENT_TARGET,
];
const SHOW_FLAGS: readonly Flag<unknown>[] = [WORKSPACE, ...AGENT_TARGET];
const CLEAR_FLAGS: readonly Flag<unknown>[] = [
  WORKSPACE,
  { name: "yes", short: "y", type: "boolean", label: "--yes, -y", help: "do not ask" },
  ...AGENT_TARGET,
];

const ABOUT = `An agent's memory is what its model saved for later sessions: the user
memory (agent_state/memory/user/) and one memory per workspace it ran in
(agent_state/memory/<name>-<hash>/). Each holds an index, MEMORY.md, which
every new session's system prompt carries, and topic files. The model keeps
them with its file tools and commands; nothing else of agent_state is
writable to it.`;

const LIST_HELP =
  `Usage: penguin memory list [--workspace <dir>] [--json] [--agent-id <id>] [--project-id <id>]

List an agent's memories: the user memory and each workspace memory (named
by its workspace), the lines of its index, and its topic files with their
update date and description. --json adds each memory's directory.

${ABOUT}

Flags:
${flagHelp(LIST_FLAGS, 23)}
`;

const SHOW_HELP =
  `Usage: penguin memory show [<file>] [--workspace <dir>] [--agent-id <id>] [--project-id <id>]

Print the user memory's index (MEMORY.md), or one of its topic files; with
--workspace, the index or a topic file of that workspace's memory. A file
that is a symbolic link or not a regular file is refused (exit 1).

${ABOUT}

Flags:
${flagHelp(SHOW_FLAGS, 23)}
`;

const CLEAR_HELP =
  `Usage: penguin memory clear [--workspace <dir>] [--yes] [--agent-id <id>] [--project-id <id>]

Forget the user memory, or with --workspace that workspace's memory: every
file in it is removed (a symbolic link is removed, never what it points to)
and the index is left empty. Asks "Clear …? [y/N]" on a terminal; without a
terminal it refuses (exit 2) unless --yes is given.

${ABOUT}

Flags:
${flagHelp(CLEAR_FLAGS, 23)}
`;

interface Target {
  paths: AgentPaths;
  agentId: string;
  ref: AgentRef;
}

function target(ctx: CommandContext, p: Parsed): Target {
  const root = resolveDataRoot({ root: ctx.root });
  const projectId = validateProjectId(str(p, "project-id") ?? DEFAULT_PROJECT_ID);
  const agentId = validateAgentId(str(p, "agent-id") ?? DEFAULT_AGENT_ID);
  return {
    paths: agentPaths({ root, projectId, agentId }),
    agentId,
    ref: { root, projectId, agentId },
  };
}

/** `text` masked with the secrets of the agent `t`: memory is what the model's commands write. */
async function masked(t: Target, text: string): Promise<string> {
  return maskSecrets(text, await knownSecrets(t.ref));
}

/** The real path of a `--workspace` (as given, resolved, when it no longer exists). */
async function workspacePath(dir: string): Promise<string> {
  return await Deno.realPath(dir).catch(() => resolve(dir));
}

/** The scope `--workspace` names, else the user scope. */
async function scopeOf(t: Target, p: Parsed): Promise<MemoryScope> {
  const ws = str(p, "workspace");
  if (ws === undefined) return { key: "user", dir: t.paths.userMemory };
  const workspace = await workspacePath(ws);
  const dir = await workspaceMemoryDir(t.paths, workspace);
  return { key: dir.slice(t.paths.memory.length + 1), dir, workspace };
}

function scopeName(s: MemoryScope): string {
  return s.key === "user" ? "user memory" : `memory of workspace ${s.workspace ?? s.key}`;
}

async function indexLines(dir: string): Promise<number> {
  const r = await readMemoryFile(dir, MEMORY_INDEX);
  const text = r.ok ? r.text.trim() : "";
  return text === "" ? 0 : text.split("\n").length;
}

async function listCommand(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("memory list", args, LIST_FLAGS, 0);
  if (bool(p, "help")) return printHelp(ctx, LIST_HELP);
  const t = target(ctx, p);
  let scopes = await listMemoryScopes(t.paths);
  if (str(p, "workspace") !== undefined) {
    const only = await scopeOf(t, p);
    scopes = scopes.filter((s) => s.key === "user" || s.dir === only.dir);
  }
  const rows = await Promise.all(scopes.map(async (s) => ({
    scope: s,
    lines: await indexLines(s.dir),
    topics: await listMemoryTopics(s.dir),
  })));
  if (bool(p, "json")) {
    const out = {
      agent_id: t.agentId,
      scopes: rows.map((r) => ({
        scope: r.scope.key === "user" ? "user" : "workspace",
        key: r.scope.key,
        dir: r.scope.dir,
        workspace: r.scope.workspace ?? null,
        index_lines: r.lines,
        topics: r.topics.map((x) => ({
          file: x.file,
          name: x.name,
          description: x.description,
          updated_at: x.updatedAt,
        })),
      })),
    };
    ctx.io.out(await masked(t, JSON.stringify(out, null, 2)) + "\n");
    return 0;
  }
  if (rows.length === 0) {
    ctx.io.out(`Agent ${t.agentId} has no memory yet (a session creates it).\n`);
    return 0;
  }
  const table: string[][] = [["SCOPE", "FILE", "UPDATED", "DESCRIPTION"]];
  for (const r of rows) {
    const scope = r.scope.key === "user" ? "user" : r.scope.workspace ?? r.scope.key;
    table.push([scope, MEMORY_INDEX, "", `index, ${r.lines} line${r.lines === 1 ? "" : "s"}`]);
    for (const x of r.topics) table.push([scope, x.file, x.updatedAt, x.description]);
  }
  const text = formatTable(table.map((row) => row.map((c) => c.replace(/\s+/g, " "))));
  ctx.io.out(safeText(await masked(t, text)));
  return 0;
}

async function showCommand(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("memory show", args, SHOW_FLAGS, 1);
  if (bool(p, "help")) return printHelp(ctx, SHOW_HELP);
  const t = target(ctx, p);
  const scope = await scopeOf(t, p);
  if (!(await exists(scope.dir, { kind: "directory", followLinks: false }))) {
    throw new PenguinError(
      "not_found",
      `memory show: agent ${t.agentId} has no ${scopeName(scope)} (see penguin memory list)`,
    );
  }
  const file = p.positionals[0] ?? MEMORY_INDEX;
  const r = await readMemoryFile(scope.dir, file);
  if (!r.ok) {
    throw new PenguinError(r.missing ? "not_found" : "runtime", `memory show: ${r.message}`);
  }
  const text = safeText(await masked(t, r.text));
  if (text.trim() === "") {
    // Nothing printed looked like a failure: say so (on stderr, stdout stays the file's text).
    ctx.io.err(
      `memory show: ${file} of agent ${t.agentId}'s ${
        scopeName(scope)
      } is empty (nothing saved yet)\n`,
    );
    return 0;
  }
  ctx.io.out(text.endsWith("\n") ? text : `${text}\n`);
  if (r.truncated) ctx.io.err(`(only the first part of ${file} was read)\n`);
  return 0;
}

async function clearCommand(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("memory clear", args, CLEAR_FLAGS, 0);
  if (bool(p, "help")) return printHelp(ctx, CLEAR_HELP);
  const t = target(ctx, p);
  const scope = await scopeOf(t, p);
  if (!(await exists(scope.dir, { kind: "directory", followLinks: false }))) {
    ctx.io.out(`Agent ${t.agentId} has no ${scopeName(scope)}; nothing to clear.\n`);
    return 0;
  }
  if (
    !bool(p, "yes") &&
    !(await confirmed(
      ctx,
      `Clear the ${scopeName(scope)} of agent ${t.agentId} (${scope.dir})`,
      `memory clear: not clearing the ${scopeName(scope)}`,
    ))
  ) {
    ctx.io.out("Not cleared.\n");
    return 1;
  }
  const removed = await clearMemoryScope(scope.dir);
  ctx.io.out(
    `Cleared the ${scopeName(scope)} of agent ${t.agentId} (${removed} file${
      removed === 1 ? "" : "s"
    } removed, index emptied).\n`,
  );
  return 0;
}

/** The `memory` commands. */
export const memoryCommands: Command[] = commandGroup(["memory"], [
  ["list", "list an agent's memories (user and per workspace)", LIST_HELP, listCommand],
  ["show", "print a memory index or topic file", SHOW_HELP, showCommand],
  ["clear", "forget the user memory or a workspace's memory", CLEAR_HELP, clearCommand],
]);
