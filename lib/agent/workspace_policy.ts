/**
 * The workspace policy file (`penguin.jsonc`) as a task applies it before
 * its session opens: load it, look up whether the user trusts its content
 * (the trust store in the data root), merge it with the task's options (it
 * may only narrow them), say what it changed and what it was not allowed to
 * change, refuse `always-ask` when nobody can answer, and derive the
 * session's confinement options from the result.
 *
 * Security-relevant: every host that starts a task (`penguin run`, `chat`,
 * the scheduler, {@linkcode runTask} callers) goes through
 * {@linkcode applyPolicyFile}.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";
import type { CommandPolicyRule } from "../state/command_policy_defaults.ts";
import { resolveDataRoot } from "../state/root.ts";
import { trustStatus } from "../state/trust.ts";
import { safeText } from "../display/terminal_text.ts";
import { maskSecrets, type Secret } from "../tools/secret_mask.ts";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../state/ids.ts";
import { homeSecrets, type SandboxMode } from "../sandbox/policy.ts";
import {
  applyWorkspacePolicy,
  type EffectivePolicy,
  loadWorkspacePolicy,
  type PolicyFlags,
  type PolicyTrust,
  type WorkspacePolicy,
} from "../sandbox/workspace_policy.ts";
import type { ApprovalMode } from "./approval.ts";
import type { RecordedSessionOptions } from "./agent.ts";

/** The confinement and approval options of a task, narrowed in place by {@linkcode applyPolicyFile}. */
export interface PolicyOptions {
  approve: ApprovalMode;
  sandbox: SandboxMode;
  network: boolean;
  /** Let a trusted penguin.jsonc add writable roots outside the workspace. */
  grantWritableRoots: boolean;
  /** Commands may commit (or penguin.jsonc `"git"`, once applied). */
  gitWritable: boolean;
  /** Extra writable roots from penguin.jsonc. */
  extraWritable?: string[];
  /** Let the workspace be or contain a home directory. */
  allowHomeWorkspace?: boolean;
  /** More readable home paths from penguin.jsonc (`home_readable`). */
  homeReadable?: string[];
  /** MCP servers `penguin.jsonc` turns off (all, or these names). */
  mcpDeny?: "all" | string[];
  /** Command rules from penguin.jsonc. */
  commandRules?: CommandPolicyRule[];
}

/** A workspace's penguin.jsonc and whether the user trusts its content. */
export interface LoadedPolicy {
  /** The file, or undefined when the workspace has none. */
  policy: WorkspacePolicy | undefined;
  /** Whether its exact content is trusted (untrusted when there is no data root). */
  trust: PolicyTrust;
}

/**
 * Load `<workspace>/penguin.jsonc` (if any) with the data root and the home
 * secrets as paths no writable root may reach, and look its content up in
 * the trust store of the data root `root` (`--root`, else the default).
 */
export async function loadPolicy(workspace: string, root?: string): Promise<LoadedPolicy> {
  try {
    return await loadPolicyUnmasked(workspace, root);
  } catch (err) {
    // The file is the model's to write: what its error quotes from it may be a secret.
    if (!(err instanceof PenguinError)) throw err;
    const masked = maskSecrets(err.message, await rootSecrets(root));
    if (masked === err.message) throw err;
    throw new PenguinError(err.kind, masked);
  }
}

/**
 * The secrets penguin knows in the data root `root`: the default agent's
 * (vault, MCP values, API keys) and the other agents' vault values. What
 * penguin prints of a `penguin.jsonc` is masked with them: a command may
 * have written a vault value into one (attack round 21 secrets A22).
 */
async function rootSecrets(root: string | undefined): Promise<Secret[]> {
  try {
    const ref = {
      root: resolveDataRoot({ root, anyKind: true }),
      projectId: DEFAULT_PROJECT_ID,
      agentId: DEFAULT_AGENT_ID,
    };
    // Loaded only here (it parses the agent's YAML configuration): most runs never need it.
    const { knownSecrets } = await import("./import_mask.ts");
    return await knownSecrets(ref);
  } catch {
    return [];
  }
}

/** `text` (what penguin prints of a `penguin.jsonc`) masked with the secrets of the data root `root`. */
export async function maskPolicyText(text: string, root: string | undefined): Promise<string> {
  return maskSecrets(text, await rootSecrets(root));
}

async function loadPolicyUnmasked(workspace: string, root?: string): Promise<LoadedPolicy> {
  const protectedPaths: string[] = [];
  let dataRoot: string | undefined;
  try {
    dataRoot = resolveDataRoot({ root, anyKind: true });
    protectedPaths.push(dataRoot);
  } catch {
    // No data root (no HOME): nothing of penguin's to protect there, and nothing trusted.
  }
  const home = Deno.env.get("HOME");
  if (home) protectedPaths.push(...homeSecrets(home));
  const policy = await loadWorkspacePolicy(workspace, { protectedPaths });
  if (policy === undefined || dataRoot === undefined) return { policy, trust: "untrusted" };
  return { policy, trust: await trustStatus(dataRoot, policy.path, policy.sha256) };
}

/**
 * Load `<workspace>/penguin.jsonc` (if any) and merge it with `flags`; each
 * note the merge produced goes to `warn` as one `[penguin] …` line.
 */
export async function effectivePolicy(
  workspace: string,
  flags: PolicyFlags,
  opts: { root?: string; warn: (line: string) => void },
): Promise<EffectivePolicy> {
  const { policy, trust } = await loadPolicy(workspace, opts.root);
  const eff = applyWorkspacePolicy(flags, policy, trust);
  // Read only when there is something to say: most runs have no note.
  const secrets = eff.notes.length > 0 ? await rootSecrets(opts.root) : [];
  for (const note of eff.notes) opts.warn(`[penguin] ${safeText(maskSecrets(note, secrets))}\n`);
  return eff;
}

/**
 * The usage error for a mode that must ask when no terminal can answer:
 * `always-ask` would deny everything without one. Other modes pass.
 * `source` names the policy file that chose the mode, when one did.
 */
export function requireTerminalFor(
  mode: ApprovalMode,
  command: string,
  terminal: boolean,
  source?: string,
): void {
  if (mode !== "always-ask" || terminal) return;
  const fix = source === undefined
    ? "pass --approve read-only, deny-all or allow-all"
    : `${source} sets it; run from a terminal, or change "approval" there`;
  throw new PenguinError(
    "usage",
    `${command}: approval mode always-ask needs a terminal to answer its prompts, and there is none ` +
      `(input is piped and /dev/tty is unavailable): ${fix}`,
  );
}

/** Where penguin.jsonc notes go, the data root it must not open up, and whether approvals can be asked. */
export interface PolicyContext {
  root?: string;
  warn(line: string): void;
  /** Someone (a terminal) can answer approval prompts. */
  canAsk: boolean;
}

/**
 * Apply `<workspace>/penguin.jsonc` to `f` (it may only narrow the options),
 * refuse always-ask when nobody can answer, and warn when the sandbox is off.
 */
export async function applyPolicyFile(
  command: string,
  f: PolicyOptions,
  workspace: string,
  pc: PolicyContext,
): Promise<void> {
  const eff = await effectivePolicy(workspace, {
    sandbox: f.sandbox,
    network: f.network,
    approve: f.approve,
    grantWritableRoots: f.grantWritableRoots,
    gitWritable: f.gitWritable,
  }, { ...(pc.root !== undefined ? { root: pc.root } : {}), warn: pc.warn });
  const narrowed = eff.approve !== undefined && eff.approve !== f.approve;
  requireTerminalFor(
    eff.approve ?? f.approve,
    command,
    pc.canAsk,
    narrowed ? `${workspace}/penguin.jsonc` : undefined,
  );
  Object.assign(f, {
    sandbox: eff.sandbox,
    network: eff.network,
    approve: eff.approve ?? f.approve,
    extraWritable: eff.extraWritable,
    homeReadable: eff.homeReadable,
    gitWritable: eff.git === "writable",
    commandRules: eff.commandRules,
    mcpDeny: eff.mcpDeny,
  });
  if (f.sandbox === "off") {
    pc.warn(
      "[penguin] warning: --sandbox off: commands run WITHOUT an OS sandbox, with all of your user's permissions\n",
    );
  }
}

/** The confinement options of a session opened with `f` (once penguin.jsonc is applied). */
export function confinement(f: PolicyOptions): RecordedSessionOptions {
  return {
    sandbox: f.sandbox,
    network: f.network,
    ...(f.extraWritable?.length ? { extraWritable: f.extraWritable } : {}),
    git: f.gitWritable ? "writable" : "read-only",
    ...(f.allowHomeWorkspace ? { allowHomeWorkspace: true } : {}),
    ...(f.homeReadable?.length ? { homeReadable: f.homeReadable } : {}),
    ...(f.mcpDeny !== undefined ? { mcpDeny: f.mcpDeny } : {}),
  };
}
