/**
 * The session flags `penguin run` and `penguin chat` share, declared once:
 * model pair, project and agent, workspace, approval, thinking, turns,
 * sandbox, network, writable roots, git and verbosity. Each declaration
 * gives its help line and its validation; {@linkcode sessionFlags} reads
 * them back and checks the rules between them (the workspace's penguin.jsonc
 * narrows them later: agent/workspace_policy.ts).
 *
 * @module
 */
import { PenguinError } from "../../protocol/errors.ts";
import type { ThinkingLevel } from "../../models/wire.ts";
import { AGENT_THINKING_LEVELS } from "../../state/system_config.ts";
import { parseSandboxMode, SANDBOX_MODES, type SandboxMode } from "../../sandbox/policy.ts";
import { APPROVAL_MODES, type ApprovalMode, parseApprovalMode } from "../../agent/approval.ts";
import type { TaskSessionOptions } from "../../agent/task_session.ts";
import { bool, type Flag, flagValue, type Parsed } from "../args.ts";
import { AGENT_ID, MODEL_ID, PROJECT_ID, PROVIDER } from "./_common_flags.ts";

/** Parse a thinking level (any case, surrounding blanks ignored) or throw a usage error naming `label`. */
export function parseThinking(value: string, label: string): ThinkingLevel {
  const v = value.trim().toLowerCase();
  if ((AGENT_THINKING_LEVELS as readonly string[]).includes(v)) return v as ThinkingLevel;
  throw new PenguinError(
    "usage",
    `${label} must be one of ${AGENT_THINKING_LEVELS.join(", ")}, got ${JSON.stringify(value)}`,
  );
}

function parseMaxTurns(value: string, label: string): number {
  if (!/^-?\d+$/.test(value)) {
    throw new PenguinError(
      "usage",
      `${label} must be an integer (0 or less: unlimited), got ${JSON.stringify(value)}`,
    );
  }
  return Number(value);
}

function parseOnOff(value: string, label: string): boolean {
  if (value !== "on" && value !== "off") {
    throw new PenguinError("usage", `${label} must be on or off, got ${JSON.stringify(value)}`);
  }
  return value === "on";
}

/** `--workspace <dir>`. */
export const WORKSPACE: Flag = {
  name: "workspace",
  type: "string",
  value: "<dir>",
  help: "working directory; must exist (default: the current directory)",
};
/** `--approve <mode>`. */
export const APPROVE: Flag<ApprovalMode> = {
  name: "approve",
  type: "string",
  value: "<mode>",
  help: "allow-all (default), deny-all, read-only (read tools run,\nothers are asked), always-ask",
  parse: parseApprovalMode,
  choices: APPROVAL_MODES,
};
/** `--thinking <level>`. */
export const THINKING: Flag<ThinkingLevel> = {
  name: "thinking",
  type: "string",
  value: "<level>",
  help: AGENT_THINKING_LEVELS.join(", "),
  parse: parseThinking,
  choices: AGENT_THINKING_LEVELS,
};
/** `--max-turns <n>`. */
export const MAX_TURNS: Flag<number> = {
  name: "max-turns",
  type: "string",
  value: "<n>",
  help: "stop after n model requests (default: the agent's max_turns;\n0 or less: unlimited)",
  parse: parseMaxTurns,
};
/** `--sandbox <mode>`. */
export const SANDBOX: Flag<SandboxMode> = {
  name: "sandbox",
  type: "string",
  value: "<mode>",
  help: `${SANDBOX_MODES.join(", ")} (default: workspace-write)`,
  parse: parseSandboxMode,
  choices: SANDBOX_MODES,
};
/** `--network on|off`. */
export const NETWORK: Flag<boolean> = {
  name: "network",
  type: "string",
  value: "on|off",
  help: "let commands use the network (default: off)",
  parse: parseOnOff,
};
/** `--grant-writable-roots`. */
export const GRANT_WRITABLE_ROOTS: Flag<boolean> = {
  name: "grant-writable-roots",
  type: "boolean",
  help: "let a trusted penguin.jsonc add writable roots outside the\nworkspace (see penguin trust)",
};
/** `--git-writable`. */
export const GIT_WRITABLE: Flag<boolean> = {
  name: "git-writable",
  type: "boolean",
  help: "let commands commit: open the workspace's .git object and\n" +
    "ref stores (config, hooks and redirections stay read-only;\ndefault: .git is read-only)",
};
/** `--allow-home-workspace`. */
export const ALLOW_HOME_WORKSPACE: Flag<boolean> = {
  name: "allow-home-workspace",
  type: "boolean",
  help: "let the workspace be or contain a home directory (refused\n" +
    "otherwise); its startup files, toolchains and credentials\nstay read-only or hidden",
};
/** `--verbose`. */
export const VERBOSE: Flag<boolean> = {
  name: "verbose",
  type: "boolean",
  help: "show tool output in full (default: long outputs show their\n" +
    'first and last lines around "… N more lines")',
};

/** The session flags, in the order the help lists them. */
export const SESSION_FLAGS: readonly Flag<unknown>[] = [
  PROVIDER,
  MODEL_ID,
  PROJECT_ID,
  AGENT_ID,
  WORKSPACE,
  APPROVE,
  THINKING,
  MAX_TURNS,
  SANDBOX,
  NETWORK,
  GRANT_WRITABLE_ROOTS,
  GIT_WRITABLE,
  ALLOW_HOME_WORKSPACE,
  VERBOSE,
];

/**
 * The validated session flags of one `run` or `chat`: a task's session
 * options (penguin.jsonc applied by `applyPolicyFile`, agent/workspace_policy.ts)
 * and `--verbose`.
 */
export interface SessionFlags extends TaskSessionOptions {
  /** `--verbose`: tool output in full. */
  verbose: boolean;
}

/**
 * Read the session flags of `p` (parsed against {@linkcode SESSION_FLAGS}
 * and a `resume` flag) and check the rules between them: the model pair is
 * given whole (with `--resume`, an explicit switch).
 */
export function sessionFlags(command: string, p: Parsed): SessionFlags {
  const provider = flagValue(p, PROVIDER);
  const modelId = flagValue(p, MODEL_ID);
  if ((provider === undefined) !== (modelId === undefined)) {
    throw new PenguinError(
      "usage",
      `${command}: --model-id and --provider must be given together; got ${
        provider !== undefined ? "--provider" : "--model-id"
      } alone`,
    );
  }
  // With `--resume`, a pair is an explicit switch: the session continues on that model.
  const resume = p.values["resume"] as string | undefined;
  const workspace = flagValue(p, WORKSPACE);
  const thinking = flagValue(p, THINKING);
  const maxTurns = flagValue(p, MAX_TURNS);
  const f: SessionFlags = {
    workspace: workspace ?? Deno.cwd(),
    approve: flagValue(p, APPROVE) ?? "allow-all",
    sandbox: flagValue(p, SANDBOX) ?? "workspace-write",
    network: flagValue(p, NETWORK) ?? false,
    verbose: bool(p, VERBOSE.name),
    grantWritableRoots: bool(p, GRANT_WRITABLE_ROOTS.name),
    gitWritable: bool(p, GIT_WRITABLE.name),
    allowHomeWorkspace: bool(p, ALLOW_HOME_WORKSPACE.name),
  };
  if (provider !== undefined && modelId !== undefined) Object.assign(f, { provider, modelId });
  const projectId = flagValue(p, PROJECT_ID);
  const agentId = flagValue(p, AGENT_ID);
  if (projectId !== undefined) f.projectId = projectId;
  if (agentId !== undefined) f.agentId = agentId;
  if (thinking !== undefined) f.thinking = thinking;
  if (maxTurns !== undefined) f.maxTurns = maxTurns;
  if (resume !== undefined) f.resume = resume;
  if (resume !== undefined && workspace !== undefined) f.resumeWorkspace = workspace;
  return f;
}

/** Throw a usage error unless `f.workspace` is a directory (skipped when resuming into the recorded one). */
export async function checkWorkspace(command: string, f: SessionFlags): Promise<void> {
  if (f.resume !== undefined && f.resumeWorkspace === undefined) return;
  await requireWorkspace(command, f.workspace);
}

/** Throw a usage error naming `command` unless the workspace `dir` is a directory. */
export async function requireWorkspace(command: string, dir: string): Promise<void> {
  let isDir: boolean;
  try {
    isDir = (await Deno.stat(dir)).isDirectory;
  } catch (err) {
    if (err instanceof Deno.errors.NotCapable) {
      throw new PenguinError(
        "usage",
        `${command}: penguin may not look at the workspace ${dir}: its permission set refuses ` +
          `/proc, /sys and most of /dev; choose a directory elsewhere`,
      );
    }
    throw new PenguinError("usage", `${command}: the workspace does not exist: ${dir}`);
  }
  if (!isDir) {
    throw new PenguinError("usage", `${command}: the workspace is not a directory: ${dir}`);
  }
}
