/**
 * Run a child process for the model under the OS sandbox: the one entry
 * point for every process penguin starts on the model's behalf.
 *
 * ```ts
 * import { createPolicy, spawnSandboxed } from "./mod.ts";
 *
 * const policy = createPolicy({ workspace: Deno.cwd() });
 * const child = await spawnSandboxed({ shell: "make test", policy });
 * for await (const chunk of child.output) console.log(chunk);
 * const { code, signal } = await child.status;
 * ```
 *
 * The sandbox fails closed: when bubblewrap (or Seatbelt) does not work,
 * spawning in `workspace-write` or `read-only` mode throws a runtime
 * {@linkcode PenguinError} that says what failed and how to fix it or opt
 * out with `--sandbox off`. Every child, sandboxed or not, gets the
 * environment built by `env.ts` and starts with a cleared environment.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";
import { type HandleOptions, type SandboxedProcess, startSupervised } from "./_process.ts";
import { LAUNCHER_PATH, launcherArgv, launcherBinary } from "./_launcher.ts";
import { retireIdle, runPooled } from "./_pool.ts";
import { type InitProgram, initProgram } from "./_init_binary.ts";
import { noteLiveRoots } from "./_live_roots.ts";
import {
  DIRECT_SECCOMP_FD,
  directShellPath,
  hasControllingTerminal,
  startDirect,
} from "./_direct.ts";
import { defaultSignalsForChildren } from "./_child_signals.ts";
import {
  beforeStandInsEnd,
  holdPlaceholders,
  releaseOnExit,
  StalePlanError,
  standInsKept,
} from "./_placeholders.ts";
import { chainAttempts, newSetupLog, takeSetupLog } from "./_setup_log.ts";
import { disarmNewRepos, endNestedRepoWatch } from "./git_nested.ts";
import { type RootGitWatch, watchRootGits } from "./root_git_watch.ts";
import { disarmOwnGitLinks } from "./git_own_links.ts";
import { relativePathWarning } from "./_path_warnings.ts";
import { disarmOwnIndexes, endOwnIndexWatch } from "./git_own_index.ts";
import { pythonImportWarnings } from "./git_config_guard.ts";
import { findGitLayout } from "./git_guard.ts";
import {
  DIRECT_MORE_FDS,
  DIRECT_ROOT_FDS,
  envAsData,
  type PinnedPath,
  ROOT_FDS,
  SECCOMP_FD,
  WORKSPACE_FD,
  wrapperArgv,
} from "./_supervisor.ts";
import { seccompFile } from "./_seccomp_file.ts";
import { OPT_OUT } from "./_hints.ts";
import { bwrapArgv } from "./bwrap.ts";
import { detectSandbox, locateBwrap, reprobeRemembered, type SandboxReport } from "./detect.ts";
import { mayBeTheMachine } from "./_setup_failure.ts";
import { DEFAULT_PATH } from "./env.ts";
import { homeRefusal, startupFileIn } from "./home.ts";
import { xdgConfigHomes, xdgStartupFileIn } from "./_xdg_config.ts";
import {
  gitWalkRoots,
  isInside,
  planPathVanished,
  resolvePlan,
  type SandboxPlan,
  withoutGoneHidden,
} from "./plan.ts";
import {
  assertPolicyPaths,
  DEFAULT_MAX_PROCESSES,
  homeSecrets,
  type SandboxPolicy,
} from "./policy.ts";
import { takeShare } from "./_process_budget.ts";
import { memoryKillsSeen } from "./_memory_cgroup.ts";
import { withMemoryVerdict } from "./_memory_verdict.ts";
import { mountWatchEnv } from "./_mount_watch_env.ts";
import { seatbeltArgv } from "./seatbelt.ts";
import { seccompEscapes } from "./seccomp.ts";

/** How often a sandbox whose plan named a path that went away is planned and started again. */
const VANISHED_RETRIES = 5;
/** What to run and how. Give exactly one of `argv` and `shell`. */
export interface SpawnOptions {
  /** Program and arguments, run directly (no shell). */
  argv?: string[];
  /**
   * A shell command line, run as `bash --noprofile --norc -c <shell>`: no
   * profile is sourced; give the policy a shell snapshot
   * (`login_env.ts`) for the login environment.
   */
  shell?: string;
  /** Working directory; default the policy's workspace. Must exist and be visible in the sandbox. */
  cwd?: string;
  /** The confinement. */
  policy: SandboxPolicy;
  /** Default `piped` (use `write`/`closeStdin`). */
  stdin?: "piped" | "null" | "inherit";
  /** Default `merged` (stdout+stderr in one stream); `inherit` passes this process's stdout/stderr through. */
  stdio?: "merged" | "inherit";
  /** Receive merged output chunks here instead of reading `output`. */
  onOutput?: (chunk: string) => void;
  /** Aborting kills the child (SIGTERM, then SIGKILL after the grace period). */
  signal?: AbortSignal;
  /** Grace between SIGTERM and SIGKILL; default 1000 ms. */
  killGraceMs?: number;
  /**
   * Run in a sandbox kept for the session (`_pool.ts`) when one can be:
   * bubblewrap's direct path, merged output read through `onOutput`, and a
   * session keeping stand-ins. Otherwise (and when its start fails) the
   * command gets a sandbox of its own, as without it.
   */
  reuse?: boolean;
}

/** How bubblewrap is started; tests pin it to reach each path. */
const launch: {
  direct?: boolean | undefined;
  detached?: boolean | undefined;
  pool?: boolean | undefined;
  afterPlan?: ((plan: SandboxPlan) => Promise<void>) | undefined;
} = {};

/**
 * Pin how bubblewrap is started (tests only): `direct` false takes the
 * supervised path, `detached` decides the direct path's session, `afterPlan`
 * runs between the plan and the start (what another session's model may do
 * in that moment); undefined restores the default for that field.
 */
export function _pinLaunch(pin: {
  direct?: boolean;
  detached?: boolean;
  pool?: boolean;
  afterPlan?: (plan: SandboxPlan) => Promise<void>;
}): void {
  launch.direct = pin.direct;
  launch.detached = pin.detached;
  launch.pool = pin.pool;
  launch.afterPlan = pin.afterPlan;
}

/**
 * The `sh` that starts bwrap as penguin's own child ({@linkcode startDirect}),
 * or undefined for the supervised path: penguin may not run one, or the
 * command shares the terminal or has no merged output (the direct path
 * always reads a control channel and never shares the terminal).
 */
function directShell(opts: SpawnOptions): string | undefined {
  if (launch.direct === false) return undefined;
  if ((opts.stdio ?? "merged") !== "merged" || opts.stdin === "inherit") return undefined;
  return directShellPath();
}

/** Variables that make bash run code at startup; never given to the unsandboxed supervisor. */
const BASH_STARTUP = /^(BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|BASH_FUNC_.*)$/;

function withoutBashStartup(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !BASH_STARTUP.test(k)));
}

function describe(opts: SpawnOptions): string {
  const text = opts.shell ?? (opts.argv ?? []).join(" ");
  return JSON.stringify(text.length > 80 ? text.slice(0, 77) + "..." : text);
}

/**
 * Why no command could run in `policy`'s workspace, or undefined when one
 * can (as far as can be told without starting one): the workspace is
 * missing, the sandbox cannot set up its mounts (e.g. a symlinked `.git`),
 * a writable workspace would contain the sandbox's own binary (the
 * workspace `/`), or the workspace is a home directory or holds shell or git
 * startup files and `allowHomeWorkspace` is not set. A sandbox that does not work on this machine at all is
 * not a workspace problem and is left to `penguin sandbox check`.
 */
export async function workspaceProblem(policy: SandboxPolicy): Promise<string | undefined> {
  if (Deno.build.os === "windows") return undefined;
  // The sandbox's own binary first: cheap, and a workspace such as "/" would otherwise have its
  // whole tree read by the plan before the answer.
  const bwrapProblem = await ownBinaryInside(policy);
  if (bwrapProblem !== undefined) return bwrapProblem;
  let plan;
  try {
    // What could refuse the workspace (the walks for credential files wait for the commands).
    plan = await resolvePlan(policy, policy.workspace, { check: true });
  } catch (err) {
    if (err instanceof PenguinError) return err.message.replace(/^Cannot sandbox: /, "");
    throw err;
  }
  const secret = secretHolding(policy, plan.roots[0]!);
  if (secret !== undefined) return secret;
  // A directory holding startup files (a copy of a home, a dotfiles repository the home links
  // to) is asked about once, when a session starts: the model could create such a file later.
  // So is one holding the user's relocated configuration (`$XDG_CONFIG_HOME/fish`, attack round 28 f07).
  const startup = policy.allowHomeWorkspace ? undefined : await startupFileIn(plan.roots[0]!) ??
    xdgStartupFileIn(plan.roots[0]!, xdgConfigHomes(policy.env, policy.home));
  if (startup !== undefined) {
    const ws = plan.roots[0]!;
    return homeRefusal({ dir: ws, root: ws, why: `a directory holding ${startup}` }, ws).message;
  }
  if (policy.mode === "off") return undefined;
  const bwrap = (await locateBwrap(bwrapOf(policy))).path;
  if (bwrap === undefined) return undefined;
  const root = plan.roots.find((r) => isInside(bwrap, r));
  if (plan.writableRoots && root !== undefined) return ownBinaryMessage(root, bwrap);
  return undefined;
}

/**
 * Why the workspace `ws` cannot be one: it is a directory of the home that
 * penguin hides from commands as credentials (`~/.ssh`, `~/.aws`,
 * `~/.config`, …), or lies inside one (`~/.ssh/config.d`; `~/.config` is
 * the exception: its other entries stay hidden beside a workspace inside
 * it). Hidden entries are hidden below a workspace, never the workspace
 * itself: `~/.config` showed the gh and rclone tokens it holds, `~/.ssh`
 * its keys (attack round 25 concgit c06b, c06c).
 */
function secretHolding(policy: SandboxPolicy, ws: string): string | undefined {
  if (policy.home === undefined) return undefined;
  let home = policy.home;
  try {
    home = Deno.realPathSync(home);
  } catch {
    // a home that is not there holds nothing
  }
  const config = `${home}/.config`;
  for (const secret of homeSecrets(home)) {
    if (ws !== secret && (secret === config || !isInside(ws, secret))) continue;
    return `the workspace "${ws}" ${ws === secret ? "is" : "lies inside"} "${secret}", which ` +
      "penguin hides from the model's commands as credentials; use a project directory as the " +
      "workspace (copy there what the task needs)";
  }
  return undefined;
}

/** Workspaces already warned about by {@linkcode workspaceWarnings} (once per process). */
const warned = new Set<string>();

/**
 * Warnings to show once when a session starts in `policy`'s workspace (the
 * first call for a workspace; later ones return none): git's configuration
 * runs `python -m <module>` from the work tree, which the model can write
 * (`git_config_guard.ts`). None in `read-only` mode.
 */
export async function workspaceWarnings(policy: SandboxPolicy): Promise<string[]> {
  if (Deno.build.os === "windows" || policy.mode === "read-only") return [];
  const ws = await Deno.realPath(policy.workspace).catch(() => undefined);
  if (ws === undefined || warned.has(ws)) return [];
  warned.add(ws);
  const out: string[] = await pythonImportWarnings(ws, await findGitLayout(ws)).catch(() => []);
  const path = relativePathWarning(policy.env.host?.["PATH"] ?? hostPath());
  if (path !== undefined) out.push(path);
  return out;
}

/** penguin's own PATH, where it may read it. */
function hostPath(): string | undefined {
  try {
    return Deno.env.get("PATH");
  } catch {
    return undefined;
  }
}

function ownBinaryMessage(root: string, bwrap: string): string {
  return `the sandbox cannot make "${root}" writable: it contains the sandbox's own binary ` +
    `"${bwrap}", which a command could replace. Use a project directory as the workspace, ` +
    `or --sandbox read-only`;
}

/** The detection options of `policy`: its own bubblewrap, if it names one. */
function bwrapOf(policy: SandboxPolicy): { bwrapPath?: string } {
  return policy.bwrapPath ? { bwrapPath: policy.bwrapPath } : {};
}

/**
 * Why a writable workspace of `policy` cannot be sandboxed: it holds bwrap itself. Only where the
 * binary lies counts, not whether it works: the probe (`detect.ts`) is not waited for, so that it
 * runs beside the session's first request (the session's warm-up starts it); every command awaits
 * it (`spawnSandboxed`), and one it fails stops there.
 */
async function ownBinaryInside(policy: SandboxPolicy): Promise<string | undefined> {
  if (policy.mode !== "workspace-write") return undefined;
  const ws = await Deno.realPath(policy.workspace).catch(() => undefined);
  if (ws === undefined) return undefined;
  const bwrap = (await locateBwrap(bwrapOf(policy))).path;
  return bwrap !== undefined && isInside(bwrap, ws) ? ownBinaryMessage(ws, bwrap) : undefined;
}

/**
 * Start `argv` or `shell` under `policy` and resolve once it runs. Throws a
 * runtime {@linkcode PenguinError} when the sandbox is unavailable or cannot
 * be set up (nothing has run then), a usage error for bad options.
 */
export async function spawnSandboxed(opts: SpawnOptions): Promise<SandboxedProcess> {
  // Long because: the start in its order (check the options, detect the sandbox, resolve the plan,
  // start, wire the streams), each step a few lines on shared locals.
  const { policy } = opts;
  if ((opts.argv === undefined) === (opts.shell === undefined)) {
    throw new PenguinError("usage", "spawnSandboxed needs exactly one of argv and shell");
  }
  if (opts.argv !== undefined && opts.argv.length === 0) {
    throw new PenguinError("usage", "spawnSandboxed: argv is empty");
  }
  if (Deno.build.os === "windows") {
    throw new PenguinError(
      "runtime",
      `Cannot run ${describe(opts)}: penguin does not run commands on Windows yet`,
    );
  }
  assertPolicyPaths(policy);
  const what = `${describe(opts)} (sandbox ${policy.mode})`;
  const report = await detectSandbox(bwrapOf(policy));
  const bash = report.bash;
  if (!bash) throw new PenguinError("runtime", `Cannot run ${what}: bash is not installed`);
  await defaultSignalsForChildren();
  if (policy.mode !== "off" && !report.usable) throw unusable(what, report);

  // Before the plan reads the data roots: a root made later in these directories is refused.
  await noteLiveRoots(policy);
  const plan = await resolvePlan(policy, opts.cwd ?? policy.workspace);
  const control = (opts.stdio ?? "merged") === "merged";
  const command = opts.shell !== undefined
    ? [bash, "--noprofile", "--norc", "-c", opts.shell]
    : opts.argv!;
  const common = commonOptions(opts, { bash, setpriv: report.setpriv, cwd: plan.cwd, what });

  if (policy.mode === "off") {
    return await startSupervised({
      ...common,
      kind: "group",
      job: wrapperArgv(bash, command, { control }),
      env: withoutBashStartup(plan.env),
      sandbox: "none",
    });
  }
  // Its part of this process's budget, for its life (see _process_budget.ts).
  const share = await takeShare(policy.maxProcesses ?? DEFAULT_MAX_PROCESSES, what);
  const kills = memoryKillsSeen();
  let child: SandboxedProcess;
  try {
    child = await startConfined(opts, { report, plan, command, common, maxProcesses: share.limit });
  } catch (err) {
    share.release();
    // Under an answer remembered by an earlier process, a sandbox that failed to set up has the
    // machine probed again: when the probe now fails, its explanation is the one to give.
    if (err instanceof PenguinError && mayBeTheMachine(err.message)) {
      const again = await reprobeRemembered(report, bwrapOf(policy));
      if (again !== undefined && !again.usable) throw unusable(what, again);
    }
    throw err;
  }
  return releaseOnExit(withMemoryVerdict(child, kills), () => Promise.resolve(share.release()));
}

/** The refusal of a command `what` when the probe found the sandbox not working. */
function unusable(what: string, report: SandboxReport): PenguinError {
  return new PenguinError(
    "runtime",
    `Cannot run ${what}: ${
      (report.failure ?? "the sandbox does not work here").replace(/\.$/, "")
    }. ` +
      `Run "penguin sandbox check" for details and fixes, ${OPT_OUT}.`,
  );
}

/** The options every way of starting the command shares. */
function commonOptions(
  opts: SpawnOptions,
  at: { bash: string; setpriv: string | undefined; cwd: string; what: string },
) {
  return {
    bash: at.bash,
    setpriv: at.setpriv,
    cwd: at.cwd,
    stdin: opts.stdin ?? "piped",
    stdio: opts.stdio ?? "merged",
    onOutput: opts.onOutput,
    signal: opts.signal,
    killGraceMs: opts.killGraceMs ?? 1000,
    describe: at.what,
    hint: `Run "penguin sandbox check" for details, ${OPT_OUT}.`,
  } as const;
}

/** What {@linkcode startConfined} needs of the start under way. */
interface ConfinedContext {
  report: SandboxReport;
  plan: SandboxPlan;
  command: string[];
  common: ReturnType<typeof commonOptions>;
  maxProcesses: number;
}

/** Start the command under bubblewrap or Seatbelt, held to `ctx.maxProcesses` processes. */
async function startConfined(opts: SpawnOptions, ctx: ConfinedContext): Promise<SandboxedProcess> {
  // Long because: the start in its order (kept sandbox, else a sandbox of its own with its
  // stand-ins, retried when a planned path went away), each step a few lines on shared locals.
  const { policy } = opts;
  const { report, command, common, maxProcesses } = ctx;
  const bash = common.bash;
  let plan = ctx.plan;
  const what = common.describe;
  const control = (opts.stdio ?? "merged") === "merged";
  if (report.kind === "seatbelt") {
    const inner = wrapperArgv(bash, command, { maxProcesses, control });
    return await startSupervised({
      ...common,
      kind: "group",
      job: seatbeltArgv(plan, inner, { tmpDirs: ["/private/tmp", "/private/var/folders"] }),
      env: withoutBashStartup(plan.env),
      sandbox: "seatbelt",
    });
  }
  const bwrap = report.bwrap!;
  if (plan.writableRoots && plan.roots.some((r) => isInside(bwrap, r))) {
    throw new PenguinError(
      "runtime",
      `Cannot run ${what}: the bubblewrap binary "${bwrap}" lies inside a writable directory`,
    );
  }
  // Missing protected paths get stand-ins for the sandbox's lifetime, and the others a lock that
  // keeps another penguin from removing them (see _placeholders.ts). A plan that went stale
  // meanwhile (a stand-in it took for the user's file was removed) is made again.
  let releaseStandIns!: () => Promise<void>;
  let rootGits: RootGitWatch | undefined;
  const hold = async () => {
    for (let attempt = 0;; attempt++) {
      try {
        releaseStandIns = await holdPlaceholders(plan.placeholders ?? [], plan.protect);
        rootGits = watchRootGits(plan.roots);
        return;
      } catch (err) {
        if (!(err instanceof StalePlanError) || attempt >= 4) throw err;
        plan = await resolvePlan(policy, opts.cwd ?? policy.workspace);
      }
    }
  };
  await launch.afterPlan?.(plan);
  const pooled = await tryPooled(opts, {
    plan,
    command,
    report,
    handle: common,
    maxProcesses,
  });
  if (pooled !== undefined) return pooled;
  // Its init runs from an unreadable bash (see _init_binary.ts); checked before anything is held.
  const init = await initProgram(bash, maxProcesses, common);
  await hold();
  // Once it has ended, a repository the command made that would run its code is disarmed.
  const release = async () => {
    await rootGits?.check();
    await releaseStandIns();
    if (plan.ownGit) await disarmOwnGitLinks(plan.ownGit);
    if (plan.gitRepos) {
      // Below every writable root, not only the workspace (see gitWalkRoots).
      for (const { root, skip } of gitWalkRoots(plan.roots)) {
        await disarmNewRepos(root, plan.gitRepos, plan.roots, skip);
      }
    }
    await disarmOwnIndexes(plan.gitIndexDirs ?? []);
  };
  // Sharing penguin's stdio there is no control channel: bwrap's setup messages go to a log.
  const logged = !control && await newSetupLog() !== undefined;
  let setupLog: string | undefined;
  // The wrapper is the sandbox's init: it sets the command's environment and outlives it.
  const inner = wrapperArgv(init.bash, command, {
    maxProcesses,
    control: logged ? "log" : control,
    init: true,
  });
  const filter = await seccompFile(plan.roots);
  // Every writable root is bound from a descriptor its launcher opened and checked (see
  // _supervisor.ts); more roots than `sh` can open take the supervised path (bash). Chosen for
  // each start: a plan made again may have more roots.
  const argv = (seccompFd: number, fds: readonly number[]) =>
    ownSandboxArgs(plan, inner, init, {
      seccompFd,
      fds,
      disableUserns: report.disableUserns,
      sizeTmpfs: report.sizeTmpfs !== false,
    });
  const start = async () => {
    plan = withoutGoneHidden(plan);
    const direct = filter === undefined ? undefined : directLaunch(plan, opts, bash);
    if (direct !== undefined && filter !== undefined) {
      return await startDirect({
        ...common,
        sh: direct.sh,
        bwrap,
        args: argv(DIRECT_SECCOMP_FD, direct.fds),
        filter,
        roots: pinnedRoots(plan, direct.fds),
        env: envAsData(plan.env, { PATH: DEFAULT_PATH, ...mountWatchEnv(plan) }),
        detached: launch.detached ?? hasControllingTerminal(),
        sandbox: "bwrap",
      });
    }
    return await startSupervised({
      ...common,
      kind: "ns",
      job: [bwrap, ...argv(SECCOMP_FD, ROOT_FDS)],
      setupLog: logged ? setupLog = await newSetupLog() : undefined,
      seccomp: filter ?? true,
      roots: pinnedRoots(plan, ROOT_FDS),
      env: envAsData(
        plan.env,
        filter
          ? { PATH: DEFAULT_PATH, ...mountWatchEnv(plan) }
          : { PATH: DEFAULT_PATH, __PSF: seccompEscapes(), ...mountWatchEnv(plan) },
      ),
      sandbox: "bwrap",
    });
  };
  let child: SandboxedProcess;
  for (let attempt = 0;; attempt++) {
    try {
      child = await start();
      break;
    } catch (err) {
      await release();
      // A path the plan mounts went away before bwrap got to it (another data root removed, a
      // repository deleted meanwhile): bwrap could not set up. Plan again, a few times (a
      // clean-up removing many directories can take one away at each attempt).
      const again = attempt < VANISHED_RETRIES && err instanceof PenguinError &&
        /failed to set up/.test(err.message) && planPathVanished(plan, err.message);
      if (!again) throw err;
      plan = await resolvePlan(policy, opts.cwd ?? policy.workspace);
      await hold();
    }
  }
  if (!logged) return releaseOnExit(child, release);
  // Sharing the terminal, a setup failure shows only once the job has ended (see _setup_log.ts):
  // the command never ran, so the sandbox starts again when a path of the plan went away.
  let restarts = 0;
  return chainAttempts(releaseOnExit(child, release), async (_status, stopped) => {
    const said = setupLog === undefined ? undefined : await takeSetupLog(setupLog);
    if (said === undefined || stopped) return undefined;
    if (restarts++ < VANISHED_RETRIES && planPathVanished(plan, said)) {
      plan = await resolvePlan(policy, opts.cwd ?? policy.workspace);
      await hold();
      try {
        return releaseOnExit(await start(), release);
      } catch (err) {
        await release();
        tellUser(err instanceof Error ? err.message : String(err));
        return undefined;
      }
    }
    tellUser(`Cannot start ${what}: the sandbox failed to set up: ${said}. ${common.hint}`);
    return undefined;
  });
}

/**
 * The bwrap arguments of a sandbox of its own for `plan`, with the wrapper `inner` as its init
 * (run from `init`), the seccomp filter on `seccompFd` and the other writable roots on `fds`.
 */
function ownSandboxArgs(
  plan: SandboxPlan,
  inner: string[],
  init: InitProgram,
  opts: { seccompFd: number; fds: readonly number[]; disableUserns: boolean; sizeTmpfs: boolean },
): string[] {
  return bwrapArgv(plan, inner, {
    seccompFd: opts.seccompFd,
    commandIsInit: true,
    disableUserns: opts.disableUserns,
    sizeTmpfs: opts.sizeTmpfs,
    ownBinds: init.binds,
    ...(plan.workspaceId ? { workspaceFd: WORKSPACE_FD } : {}),
    ...pinnedFdOptions(plan, opts.fds),
  });
}

/** Set once a launcher refused to run here (it would be dumpable): no pool for this process. */
let poolBroken = false;
// Once no command of any session runs, the last walk for repositories they armed (git_nested.ts).
beforeStandInsEnd(async () => {
  await retireIdle().catch(() => {});
  await endNestedRepoWatch();
  await endOwnIndexWatch();
});

/** What {@linkcode tryPooled} needs of the start under way. */
interface PoolContext {
  plan: SandboxPlan;
  command: string[];
  report: {
    bash?: string | undefined;
    bwrap?: string | undefined;
    disableUserns: boolean;
    sizeTmpfs?: boolean | undefined;
  };
  handle: Omit<HandleOptions, "sandbox">;
  /** The process limit it runs with (the command's share of the budget). */
  maxProcesses: number;
}

/** Thrown by a pooled start whose plan went stale: the command takes the per-command path. */
class PoolFallback extends Error {}

/**
 * Run the command in a sandbox kept for the session (see `_pool.ts`), or
 * undefined when it cannot (then nothing has run and the caller starts a
 * sandbox of its own).
 */
async function tryPooled(
  opts: SpawnOptions,
  ctx: PoolContext,
): Promise<SandboxedProcess | undefined> {
  if (!opts.reuse || launch.pool === false || poolBroken || !opts.onOutput) return undefined;
  if ((opts.stdio ?? "merged") !== "merged" || opts.stdin === "inherit") return undefined;
  if (!standInsKept()) return undefined;
  const { report } = ctx;
  // As at every start (see withoutGoneHidden): checked only once the pool is the way taken.
  const plan = withoutGoneHidden(ctx.plan);
  const bash = report.bash!;
  const bwrap = report.bwrap!;
  const maxProcesses = ctx.maxProcesses;
  if ([...ctx.command, plan.cwd].some((a) => a.includes("\0"))) return undefined;
  const filter = await seccompFile(plan.roots);
  const direct = directLaunch(plan, opts, bash);
  if (direct === undefined || filter === undefined) return undefined;
  const { sh, fds } = direct;
  const bin = await launcherBinary(bash);
  if (bin === undefined) return undefined;
  // The sandbox is what this command's own would be, with the launcher as its init and the
  // working directory left to the launcher.
  const args = bwrapArgv({ ...plan, cwd: "/" }, launcherArgv(maxProcesses), {
    seccompFd: DIRECT_SECCOMP_FD,
    commandIsInit: true,
    disableUserns: report.disableUserns,
    sizeTmpfs: report.sizeTmpfs !== false,
    ownBinds: ["--ro-bind", bin, LAUNCHER_PATH],
    ...(plan.workspaceId ? { workspaceFd: WORKSPACE_FD } : {}),
    ...pinnedFdOptions(plan, fds),
  });
  const roots = pinnedRoots(plan, fds);
  const env = envAsData(plan.env, { PATH: DEFAULT_PATH, ...mountWatchEnv(plan) });
  const detached = launch.detached ?? hasControllingTerminal();
  const key = JSON.stringify([bwrap, args, roots, env, filter, detached]);
  // What lies at the roots' `.git` stand-ins as this command starts (again once a new sandbox
  // has made them), checked once it has ended (`root_git_watch.ts`).
  let rootGits = watchRootGits(plan.roots);
  try {
    return await runPooled({
      key,
      argv: ctx.command,
      cwd: plan.cwd,
      stdin: opts.stdin === "null" ? "null" : "piped",
      bash,
      handle: { ...ctx.handle, sandbox: "bwrap" },
      keep: standInsKept,
      start: async () => {
        let release;
        try {
          release = await holdPlaceholders(plan.placeholders ?? [], plan.protect);
        } catch (err) {
          if (err instanceof StalePlanError) throw new PoolFallback();
          throw err;
        }
        rootGits = watchRootGits(plan.roots);
        return { bash, sh, bwrap, args, filter, roots, env, detached, release };
      },
      after: async () => {
        await rootGits.check();
        if (plan.ownGit) await disarmOwnGitLinks(plan.ownGit);
        await disarmOwnIndexes(plan.gitIndexDirs ?? []);
        if (!plan.gitRepos) return;
        for (const { root, skip } of gitWalkRoots(plan.roots)) {
          await disarmNewRepos(root, plan.gitRepos, plan.roots, skip);
        }
      },
    });
  } catch (err) {
    if (err instanceof PoolFallback) return undefined;
    if (!(err instanceof PenguinError)) throw err;
    if (/would be dumpable/.test(err.message)) poolBroken = true;
    // Nothing ran: the command gets a sandbox of its own, which reports what fails.
    return undefined;
  }
}

/** How many paths the launcher of `plan` opens for bwrap besides the workspace: the other roots, then the reveals. */
function pinCount(plan: SandboxPlan): number {
  return (plan.rootIds?.length ?? 0) + (plan.reveals?.length ?? 0);
}

/**
 * The direct path's shell and fds for `plan`: `sh` (dash) while its pinned paths fit the fds
 * one digit names, else bash, which names more; undefined when the direct path cannot be taken.
 */
function directLaunch(
  plan: SandboxPlan,
  opts: SpawnOptions,
  bash: string,
): { sh: string; fds: readonly number[] } | undefined {
  const sh = directShell(opts);
  const n = pinCount(plan);
  if (sh === undefined || n > DIRECT_MORE_FDS.length) return undefined;
  return n <= DIRECT_ROOT_FDS.length
    ? { sh, fds: DIRECT_ROOT_FDS }
    : { sh: bash, fds: DIRECT_MORE_FDS };
}

/** bwrap's `rootFds` and `revealFds` for `plan` when its launcher opens them on `fds`. */
function pinnedFdOptions(
  plan: SandboxPlan,
  fds: readonly number[],
): { rootFds?: number[]; revealFds?: number[] } {
  const roots = plan.rootIds?.length ?? 0;
  const reveals = plan.reveals?.length ?? 0;
  return {
    ...(plan.rootIds ? { rootFds: fds.slice(0, roots) } : {}),
    ...(reveals > 0 ? { revealFds: fds.slice(roots, roots + reveals) } : {}),
  };
}

/**
 * What the launcher of `plan` opens and checks for bwrap: the workspace, then the other roots
 * and the reveals on `fds`, in that order.
 */
function pinnedRoots(plan: SandboxPlan, fds: readonly number[]): PinnedPath[] {
  if (pinCount(plan) > fds.length) {
    throw new PenguinError(
      "runtime",
      `Cannot sandbox: the plan binds ${pinCount(plan)} writable roots and home paths shown ` +
        `read-only, more than the ${fds.length} the sandbox can open; name fewer in penguin.jsonc ` +
        `(home_readable, writable_roots)`,
    );
  }
  const out: PinnedPath[] = [];
  if (plan.workspaceId) {
    out.push({ fd: WORKSPACE_FD, path: plan.roots[0]!, ino: plan.workspaceId.ino });
  }
  const ids = plan.rootIds ?? [];
  ids.forEach((id, i) => out.push({ fd: fds[i]!, path: id.path, ino: id.ino }));
  (plan.reveals ?? []).forEach((r, i) =>
    out.push({ fd: fds[ids.length + i]!, path: r.source, kind: r.kind })
  );
  return out;
}

/** Tell the user, on the stderr the command shares, why it did not run. */
function tellUser(message: string): void {
  try {
    Deno.stderr.writeSync(new TextEncoder().encode(`penguin: ${message}\n`));
  } catch {
    // No stderr to tell.
  }
}
