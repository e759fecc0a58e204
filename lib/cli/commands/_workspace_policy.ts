/**
 * The workspace policy file (`penguin.jsonc`) as the commands that start
 * sandboxed work apply it: load it, look up whether the user trusts its
 * content (the trust store in the data root), merge it with the flags,
 * print what it changed and what it was not allowed to change on stderr.
 *
 * @module
 */
import { homeSecrets } from "../../sandbox/policy.ts";
import {
  applyWorkspacePolicy,
  type EffectivePolicy,
  loadWorkspacePolicy,
  type PolicyFlags,
  type PolicyTrust,
  type WorkspacePolicy,
} from "../../sandbox/workspace_policy.ts";
import { resolveDataRoot } from "../../state/root.ts";
import { trustStatus } from "../../state/trust.ts";
import { safeText } from "../../display/terminal_text.ts";

/** The penguin.jsonc paragraph of the help of `run`, `chat` and `sandbox run`. */
export const POLICY_FILE_HELP =
  `Workspace policy: a penguin.jsonc at the workspace root can narrow these
flags (sandbox read-only, network off, stricter approval, extra command
rules, "git": "read-only"). Settings that widen them ("git": "writable",
"network": "on", writable roots outside the workspace) apply only once you
trust the file's exact content with "penguin trust"; otherwise each is
ignored with a warning. Outside writable roots also need
--grant-writable-roots, and a network allowlist cannot be enforced with
--network on (penguin refuses to start).`;

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
  for (const note of eff.notes) opts.warn(`[penguin] ${safeText(note)}\n`);
  return eff;
}
