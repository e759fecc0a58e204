/**
 * The workspace policy file (`penguin.jsonc`) as the commands that start
 * sandboxed work apply it: load it, merge it with the flags, print what it
 * changed on stderr.
 *
 * @module
 */
import { homeSecrets } from "../../sandbox/policy.ts";
import {
  applyWorkspacePolicy,
  type EffectivePolicy,
  loadWorkspacePolicy,
  type PolicyFlags,
} from "../../sandbox/workspace_policy.ts";
import { resolveDataRoot } from "../../state/root.ts";

/** The penguin.jsonc paragraph of the help of `run`, `chat` and `sandbox run`. */
export const POLICY_FILE_HELP =
  `Workspace policy: a penguin.jsonc at the workspace root can narrow these
flags (sandbox read-only, network off, stricter approval, extra command
rules) but never widen them; writable roots outside the workspace need
--grant-writable-roots, and a network allowlist cannot be enforced with
--network on (penguin refuses to start). Its "git" setting ("read-only" or
"writable") decides over --git-writable.`;

/**
 * Load `<workspace>/penguin.jsonc` (if any) and merge it with `flags`; each
 * note the merge produced goes to `warn` as one `[penguin] …` line.
 */
export async function effectivePolicy(
  workspace: string,
  flags: PolicyFlags,
  opts: { root?: string; warn: (line: string) => void },
): Promise<EffectivePolicy> {
  const protectedPaths: string[] = [];
  try {
    protectedPaths.push(resolveDataRoot({ root: opts.root, anyKind: true }));
  } catch {
    // No data root (no HOME): nothing of penguin's to protect there.
  }
  const home = Deno.env.get("HOME");
  if (home) protectedPaths.push(...homeSecrets(home));
  const policy = await loadWorkspacePolicy(workspace, { protectedPaths });
  const eff = applyWorkspacePolicy(flags, policy);
  for (const note of eff.notes) opts.warn(`[penguin] ${note}\n`);
  return eff;
}
