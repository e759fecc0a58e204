/**
 * The workspace policy file (`penguin.jsonc`) in the commands' help; how
 * it is loaded, trusted and applied lives in agent/workspace_policy.ts
 * (re-exported here for `trust` and `sandbox run`).
 *
 * @module
 */
export {
  effectivePolicy,
  type LoadedPolicy,
  loadPolicy,
  maskPolicyText,
} from "../../agent/workspace_policy.ts";

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
