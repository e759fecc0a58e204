/**
 * `penguin skills install|list|remove`: an agent's skills
 * (`agent_state/skills/<name>/`).
 *
 * @module
 */
import { maskSecrets } from "../../tools/secret_mask.ts";
import { knownSecrets } from "../../agent/import_mask.ts";
import { agentInitOptions } from "../../agent/builtin_tool_config.ts";
import { resolve } from "node:path";
import { errorMessage, PenguinError } from "../../protocol/errors.ts";
import { safeText } from "../../display/terminal_text.ts";
import {
  DEFAULT_AGENT_ID,
  DEFAULT_PROJECT_ID,
  installSkill,
  listSkills,
  loadOrInitAgent,
  removeSkill,
  resolveDataRoot,
  validateAgentId,
  validateProjectId,
} from "../../state/mod.ts";
import { bool, type Flag, flagHelp, type Parsed, parseDeclared, str } from "../args.ts";
import { AGENT_TARGET, JSON_OUTPUT } from "./_common_flags.ts";
import { type Command, type CommandContext, commandGroup } from "../command.ts";
import { formatTable, printHelp } from "./_config_common.ts";

const INSTALL_FLAGS: readonly Flag<unknown>[] = [
  {
    name: "name",
    type: "string",
    value: "<name>",
    help: "install under this name (letters, digits, _ and -)",
  },
  ...AGENT_TARGET,
];
const LIST_FLAGS: readonly Flag<unknown>[] = [
  { ...JSON_OUTPUT, help: "print a JSON object instead of a table" },
  ...AGENT_TARGET,
];

const INSTALL_HELP = `Usage: penguin skills install <dir | file.tar.gz> [--name <name>]
                              [--agent-id <id>] [--project-id <id>]

Install a skill: a directory, or a .tar.gz archive, holding SKILL.md at its
top (or in its one top-level directory) and any files it refers to. The
skill's name is --name, else the "name" in SKILL.md's frontmatter, else the
directory or archive name. A skill of the same name is replaced whole. Only
plain files are taken: a symbolic link, a device, an absolute path or a path
with ".." refuses the install. Installed skills are listed in the agent's
system prompt, the model's commands can read them (read-only), and
"penguin run --skill <name>" asks the model to use one.

Flags:
${flagHelp(INSTALL_FLAGS, 23)}
`;

const LIST_HELP = `Usage: penguin skills list [--json] [--agent-id <id>] [--project-id <id>]

List the agent's skills with their version and description.

Flags:
${flagHelp(LIST_FLAGS, 23)}
`;

const REMOVE_HELP = `Usage: penguin skills remove <name> [--agent-id <id>] [--project-id <id>]

Remove one of the agent's skills. A name that is not installed is an error
(exit code 1).

Flags:
${flagHelp(AGENT_TARGET, 23)}
`;

async function skillsDir(
  ctx: CommandContext,
  p: Parsed,
): Promise<{ dir: string; agentId: string; mask: (text: string) => string }> {
  const root = resolveDataRoot({ root: ctx.root });
  const projectId = validateProjectId(str(p, "project-id") ?? DEFAULT_PROJECT_ID);
  const agentId = validateAgentId(str(p, "agent-id") ?? DEFAULT_AGENT_ID);
  const agent = await loadOrInitAgent({ root, projectId, agentId }, agentInitOptions());
  // A skill may be a folder a model wrote: what is printed of it is masked (attack round 22 A04).
  const secrets = await knownSecrets({ root, projectId, agentId });
  return { dir: agent.paths.skills, agentId, mask: (text) => maskSecrets(text, secrets) };
}

async function installCommand(args: string[], ctx: CommandContext): Promise<number> {
  const cmd = "skills install";
  const p = parseDeclared(cmd, args, INSTALL_FLAGS, 1);
  if (bool(p, "help")) return printHelp(ctx, INSTALL_HELP);
  const source = p.positionals[0];
  if (!source) throw new PenguinError("usage", `${cmd}: give a skill directory or .tar.gz file`);
  const { dir, agentId, mask } = await skillsDir(ctx, p);
  // Not read from under a running session's commands, which could swap its files for links. The
  // path is resolved once and read by what it resolved to: a link checked while it named a
  // directory no command writes was re-pointed into the workspace before the copy (attack round
  // 29 k01).
  const { refuseWhereCommandsWrite } = await import("../../sandbox/live_writers.ts");
  const what = `${cmd}: cannot install "${source}"`;
  // A path that cannot be resolved (a tree deeper than realpath's limit, which open still
  // follows) is refused: read by name, it went through a link re-pointed meanwhile (attack round
  // 30 p01). A missing one is left to the install to report.
  const real = await Deno.realPath(resolve(source)).catch((err) => {
    if (err instanceof Deno.errors.NotFound) return resolve(source);
    throw new PenguinError("usage", `${what}: its path cannot be resolved (${errorMessage(err)})`);
  });
  await refuseWhereCommandsWrite(real, what);
  let done;
  try {
    done = await installSkill(dir, real, str(p, "name"), resolve(source));
  } catch (err) {
    if (!(err instanceof PenguinError)) throw err;
    throw new PenguinError(err.kind, mask(err.message));
  }
  // A session that started meanwhile may have written what was read: the skill is taken back.
  try {
    await refuseWhereCommandsWrite(real, what);
  } catch (err) {
    await Deno.remove(done.skill.dir, { recursive: true }).catch(() => {});
    throw err;
  }
  for (const left of done.leftOut) {
    ctx.io.err(safeText(mask(`penguin: skipped ${left.path}: ${left.reason}\n`)));
  }
  ctx.io.out(mask(
    `${done.replaced ? "Replaced" : "Installed"} skill ${done.skill.name} (${done.files} file${
      done.files === 1 ? "" : "s"
    }) for agent ${agentId}.\n`,
  ));
  return 0;
}

async function listCommand(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("skills list", args, LIST_FLAGS, 0);
  if (bool(p, "help")) return printHelp(ctx, LIST_HELP);
  const { dir, agentId, mask } = await skillsDir(ctx, p);
  const skills = await listSkills(dir);
  if (bool(p, "json")) {
    const out = {
      skills: skills.map((s) => ({
        name: s.name,
        version: s.version,
        description: s.description,
        ...(s.shortDescription !== undefined ? { short_description: s.shortDescription } : {}),
        updated: s.updated,
        path: s.dir,
      })),
    };
    ctx.io.out(mask(JSON.stringify(out, null, 2)) + "\n");
  } else if (skills.length === 0) {
    ctx.io.out(
      `Agent ${agentId} has no skills. Install one with: penguin skills install <dir | file.tar.gz>\n`,
    );
  } else {
    const rows = skills.map((s) => [s.name, String(s.version), s.description]);
    ctx.io.out(mask(formatTable([["NAME", "VERSION", "DESCRIPTION"], ...rows])));
  }
  return 0;
}

async function removeCommand(args: string[], ctx: CommandContext): Promise<number> {
  const cmd = "skills remove";
  const p = parseDeclared(cmd, args, AGENT_TARGET, 1);
  if (bool(p, "help")) return printHelp(ctx, REMOVE_HELP);
  const name = p.positionals[0];
  if (!name) throw new PenguinError("usage", `${cmd}: which skill? give its name`);
  const { dir, agentId } = await skillsDir(ctx, p);
  if (!(await removeSkill(dir, name))) {
    throw new PenguinError(
      "not_found",
      `${cmd}: agent ${agentId} has no skill ${JSON.stringify(name)} (see penguin skills list)`,
    );
  }
  ctx.io.out(`Removed skill ${name} from agent ${agentId}.\n`);
  return 0;
}

/** The `skills` commands. */
export const skillsCommands: Command[] = commandGroup(["skills"], [
  ["install", "install a skill (directory or .tar.gz) for an agent", INSTALL_HELP, installCommand],
  ["list", "list an agent's skills", LIST_HELP, listCommand],
  ["remove", "remove one of an agent's skills", REMOVE_HELP, removeCommand],
]);
