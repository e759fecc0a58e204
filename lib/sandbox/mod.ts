/**
 * Confine the model: every child process penguin starts for the model runs
 * through {@linkcode spawnSandboxed} (bubblewrap on Linux, Seatbelt on
 * macOS), with an environment built from scratch.
 *
 * @module
 */
export {
  assertPolicyPaths,
  createPolicy,
  DEFAULT_MAX_PROCESSES,
  HOME_SECRET_PATTERNS,
  HOME_SECRETS,
  homeSecrets,
  parseSandboxMode,
  type PolicyOptions,
  SANDBOX_MODES,
  type SandboxEnv,
  type SandboxMode,
  type SandboxPolicy,
} from "./policy.ts";
export {
  buildChildEnv,
  type ChildEnvOptions,
  DEFAULT_PATH,
  ENV_ALLOWLIST,
  FORCED_ENV,
  isCredentialEnv,
  isCredentialEnvName,
  isCredentialEnvValue,
  isForbiddenEnvName,
  isLoginEnvAllowed,
  LOGIN_ENV_ALLOWLIST,
  loginEnvValue,
  PROXY_VARS,
} from "./env.ts";
export { isInside, type Placeholder, resolvePlan, type SandboxPlan } from "./plan.ts";
export {
  SECCOMP_BLOCKS,
  type SeccompArch,
  seccompArch,
  seccompInstructions,
  seccompProgram,
} from "./seccomp.ts";
export { bwrapArgv, bwrapEnvArgs, bwrapMountArgs, type BwrapOptions } from "./bwrap.ts";
export {
  SANDBOX_EXEC,
  seatbeltArgv,
  type SeatbeltOptions,
  type SeatbeltProfile,
  seatbeltProfile,
} from "./seatbelt.ts";
export {
  type CheckStatus,
  type DetectOptions,
  detectSandbox,
  findBash,
  findBwrap,
  type SandboxCheck,
  type SandboxReport,
  type SeccompReport,
} from "./detect.ts";
export { withCgroupChecks } from "./cgroup_checks.ts";
export { makePrivateTempDir } from "./private_temp_dir.ts";

export {
  type ExitStatus,
  type ForwardSignal,
  type SandboxedProcess,
  type SandboxKind,
  signalName,
} from "./_process.ts";
export { type SpawnOptions, spawnSandboxed, workspaceProblem } from "./spawn.ts";
export { pinnedWorkspace } from "./workspace_identity.ts";
export {
  clearLoginEnvironments,
  LOGIN_TIMEOUT_MS,
  loginEnvironment,
  parseSnapshot,
  withLoginEnvironment,
} from "./login_env.ts";
export {
  findGitLayout,
  GIT_ACCESS_MODES,
  GIT_GUARDED_ENTRIES,
  GIT_WRITABLE_HINT,
  type GitAccess,
  type GitLayout,
  gitWriteRefusal,
  type GuardedEntry,
  parseGitAccess,
} from "./git_guard.ts";
export { openPager, type Pager, pagerCommand } from "./pager.ts";
export { spawnHostChild } from "./host_child.ts";
