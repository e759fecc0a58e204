/**
 * `penguin config vault set|list|remove`: the agent's `.vault.toml`.
 *
 * @module
 */
import { PenguinError } from "../../protocol/errors.ts";
import { DEFAULT_AGENT_ID, validateAgentId } from "../../state/ids.ts";
import { vaultPath } from "../../state/paths.ts";
import { loadVault, removeVaultEntry, setVaultEntry } from "../../state/vault.ts";
import { bool, type Flag, flagHelp, type Parsed, parseDeclared, str } from "../args.ts";
import { AGENT_TARGET, JSON_OUTPUT } from "./_common_flags.ts";
import { type Command, type CommandContext, commandGroup } from "../command.ts";
import { readSecret } from "../secret_input.ts";
import {
  formatTable,
  maskSecret,
  printHelp,
  projectTarget,
  requiredFlag,
} from "./_config_common.ts";

const KEY: Flag = { name: "key", type: "string", value: "<KEY>", help: "variable name" };
const VALUE: Flag = {
  name: "value",
  type: "string",
  value: "<value>",
  help: 'secret value; "-" or left out: read from standard input\n' +
    "(a prompt that does not echo on a terminal)",
};
const SET_FLAGS = [KEY, VALUE, ...AGENT_TARGET];
const LIST_FLAGS = [
  { ...JSON_OUTPUT, help: "print a JSON object of key -> masked value" },
  ...AGENT_TARGET,
];
const REMOVE_FLAGS = [KEY, ...AGENT_TARGET];

const SET_HELP = `Usage: penguin config vault set --key <KEY> [--value <value>|-]
                                [--agent-id <id>] [--project-id <id>]

Store a secret in the agent's vault (.vault.toml, mode 0600). Vault entries
become environment variables of the commands the agent runs; their values
never appear in prompts or traces. Keys look like environment variable names
(letters, digits and "_", not starting with a digit); values are at most 8192
characters.

Without --value (or with --value -) the value is read from standard input,
so it stays out of the shell history and the process list: piped in
(printf %s "$TOKEN" | penguin config vault set --key TOKEN; one trailing
newline is dropped), or typed at a prompt that does not echo it.

Flags:
${flagHelp(SET_FLAGS, 23)}
`;

const LIST_HELP = `Usage: penguin config vault list [--json] [--agent-id <id>] [--project-id <id>]

List the agent's vault keys with masked values ("***" up to 12 characters,
else "****" and the last 4).

Flags:
${flagHelp(LIST_FLAGS, 23)}
`;

const REMOVE_HELP =
  `Usage: penguin config vault remove --key <KEY> [--agent-id <id>] [--project-id <id>]

Remove one key from the agent's vault; the file is deleted when it becomes
empty. A key that is not there is an error (exit code 1).

Flags:
${flagHelp(REMOVE_FLAGS, 23)}
`;

function vaultTarget(ctx: CommandContext, p: Parsed): { agentId: string; path: string } {
  const { root, projectId } = projectTarget(ctx, p);
  const agentId = validateAgentId(str(p, "agent-id") ?? DEFAULT_AGENT_ID);
  return { agentId, path: vaultPath({ root, projectId, agentId }) };
}

/** A keyed vault command's flags, key and vault; undefined when it printed its help. */
function keyedTarget(
  cmd: string,
  args: string[],
  flags: readonly Flag<unknown>[],
  help: string,
  ctx: CommandContext,
): { p: Parsed; key: string; agentId: string; path: string } | undefined {
  const p = parseDeclared(cmd, args, flags, 0);
  if (bool(p, "help")) {
    printHelp(ctx, help);
    return undefined;
  }
  const key = requiredFlag(cmd, p, "key");
  return { p, key, ...vaultTarget(ctx, p) };
}

async function setCommand(args: string[], ctx: CommandContext): Promise<number> {
  const t = keyedTarget("config vault set", args, SET_FLAGS, SET_HELP, ctx);
  if (t === undefined) return 0;
  const { p, key, agentId, path } = t;
  const given = str(p, "value");
  const value = given === undefined || given === "-"
    ? await readSecret(`Value for ${key} (not shown): `, `value of ${key}`)
    : given;
  await setVaultEntry(path, key, value);
  ctx.io.out(`Saved vault key ${key} for agent ${agentId}.\n`);
  return 0;
}

async function listCommand(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("config vault list", args, LIST_FLAGS, 0);
  if (bool(p, "help")) return printHelp(ctx, LIST_HELP);
  const { agentId, path } = vaultTarget(ctx, p);
  const rows = Object.entries(await loadVault(path)).map(([k, v]) => [k, maskSecret(v)]);
  if (bool(p, "json")) ctx.io.out(JSON.stringify(Object.fromEntries(rows), null, 2) + "\n");
  else if (rows.length === 0) ctx.io.out(`No vault keys for agent ${agentId}.\n`);
  else ctx.io.out(formatTable([["KEY", "VALUE"], ...rows]));
  return 0;
}

async function removeCommand(args: string[], ctx: CommandContext): Promise<number> {
  const cmd = "config vault remove";
  const t = keyedTarget(cmd, args, REMOVE_FLAGS, REMOVE_HELP, ctx);
  if (t === undefined) return 0;
  const { key, agentId, path } = t;
  if (!(await removeVaultEntry(path, key))) {
    throw new PenguinError(
      "not_found",
      `${cmd}: no vault key ${JSON.stringify(key)} for agent ${agentId} (${path})`,
    );
  }
  ctx.io.out(`Removed vault key ${key} from agent ${agentId}.\n`);
  return 0;
}

/** The vault commands. */
export const vaultCommands: Command[] = commandGroup(["config", "vault"], [
  ["set", "store a secret for an agent's commands", SET_HELP, setCommand],
  ["list", "list an agent's vault keys (values masked)", LIST_HELP, listCommand],
  ["remove", "remove a key from an agent's vault", REMOVE_HELP, removeCommand],
]);
