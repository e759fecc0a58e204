/**
 * The bubblewrap command line for a {@linkcode SandboxPlan}: a pure function,
 * tested as text.
 *
 * Mount order is what makes the policy hold. bwrap applies mounts in argv
 * order and a later mount covers an earlier one, so after `--ro-bind / /` the
 * remaining mounts are sorted by path depth (parents first), and at equal
 * depth hiding comes before binding, binding before protecting. That way
 * a workspace inside the hidden data root is bound after the data root is
 * hidden and stays visible, and `.git/hooks` is re-bound read-only after the
 * workspace is bound writable.
 *
 * @module
 */
import type { SandboxPlan } from "./plan.ts";

/** Options of {@linkcode bwrapArgv}. */
export interface BwrapOptions {
  /**
   * Read the `--setenv` pairs from this file descriptor (`--args FD`) instead
   * of the command line, so vault values never show in `ps`. The caller
   * writes {@linkcode bwrapEnvArgs} there, NUL-separated.
   */
  envFd?: number;
  /** Pass `--disable-userns` (bubblewrap 0.8+). Default true. */
  disableUserns?: boolean;
  /**
   * Bound the writable tmpfs mounts (`/tmp`, `/dev/shm`) with `--size` (bubblewrap 0.7+, not
   * setuid): {@linkcode TMP_BYTES}, {@linkcode SHM_BYTES}. Default true.
   */
  sizeTmpfs?: boolean;
  /**
   * Penguin's own binds (its launcher at `/dev/.penguin-launcher`), mounted after the plan's and
   * before `/dev` turns read-only.
   */
  ownBinds?: readonly string[];
  /**
   * Install the seccomp filter bwrap reads from this file descriptor
   * (`--seccomp FD`); the caller writes `seccompProgram()` there.
   */
  seccompFd?: number;
  /** Report the host PID of the sandbox's init on this file descriptor (`--info-fd FD`). */
  infoFd?: number;
  /**
   * The command is the sandbox's init (`--as-pid-1`) and builds its own
   * environment (the wrapper of `_supervisor.ts`): bwrap passes its
   * environment through (no `--clearenv`, no `--setenv`).
   */
  commandIsInit?: boolean;
  /**
   * The caller opened the plan's workspace (`plan.workspaceId`) on this file
   * descriptor and checked it: the workspace is bound from it
   * (`--bind-fd`), and every mount whose source lies in the workspace takes
   * its source through it (`/proc/self/fd/FD/<rel>`), so no rename of the
   * workspace path or of a parent between the check and the mount can
   * substitute another directory.
   */
  workspaceFd?: number;
  /**
   * The caller opened and checked `plan.reveals` on these descriptors, in order
   * (`_supervisor.ts`): each is bound read-only from its descriptor (`--ro-bind-fd`), never by
   * a path another session's model may re-point meanwhile.
   */
  revealFds?: readonly number[];
  /**
   * The caller opened the plan's other roots (`plan.rootIds`, in order) on
   * these descriptors and checked them: each is bound from its descriptor,
   * and mounts whose source lies in it take the source through it, as for
   * `workspaceFd`.
   */
  rootFds?: readonly number[];
}

/**
 * The size of a sandbox's private `/tmp`. A tmpfs's pages belong to no process, so the kernel's
 * out-of-memory killer never picks the command filling one: unbounded (half the machine's memory
 * each, by default), a command filling `/tmp` and `/dev/shm` had the host's own processes killed.
 * Larger temporary data belongs in the workspace.
 */
export const TMP_BYTES = 1024 * 1024 * 1024;
/** The size of a sandbox's `/dev/shm` (POSIX shared memory, semaphores). */
export const SHM_BYTES = 256 * 1024 * 1024;

interface MountOp {
  path: string;
  rank: number;
  args: string[];
  /** A `-try` mount: bwrap skips it when its source is missing. */
  optional?: boolean;
}

function depth(path: string): number {
  return path.split("/").filter((s) => s !== "").length;
}

const within = (path: string, root: string) =>
  root === "/" || path === root || path.startsWith(root + "/");

/**
 * Whether a hidden directory or file needs a mount of its own: `/tmp` is a fresh
 * tmpfs, so a path under it is seen only where a bind (a root, a pinned or
 * protected path, a reveal) shows it or lies inside it. Left out, the other
 * penguin processes' run directories and data roots under `/tmp`, which come
 * and go, no longer change a kept sandbox's arguments (and its key).
 */
function shownUnderTmp(plan: SandboxPlan): (path: string) => boolean {
  const binds = [
    ...plan.roots,
    ...(plan.pinned ?? []),
    ...(plan.pinnedTry ?? []),
    ...plan.protect,
    ...(plan.protectTry ?? []),
    ...(plan.reveals ?? []).map((r) => r.target),
  ];
  return (path) => !within(path, "/tmp") || binds.some((b) => within(path, b) || within(b, path));
}

/**
 * The ordered mount arguments for `plan` (after `--ro-bind / / --dev /dev --proc /proc`),
 * the workspace bound from `workspaceFd` when given (see {@linkcode BwrapOptions}).
 */
export function bwrapMountArgs(
  plan: SandboxPlan,
  workspaceFd?: number,
  rootFds?: readonly number[],
  revealFds?: readonly number[],
  sizeTmpfs = true,
): string[] {
  const { ops, late } = mountOps(plan, workspaceFd, rootFds, revealFds, sizeTmpfs);
  // Array.prototype.sort is stable, so equal keys keep their input order.
  ops.sort((a, b) => depth(a.path) - depth(b.path) || a.rank - b.rank);
  return [...ops.flatMap((o) => o.args), ...late];
}

/**
 * Where the plan mounts something inside one of its roots: a directory another penguin session
 * (or the model, renaming a parent for a moment) may have writable, so that the mount point can be
 * renamed or removed and the mount detached, or bwrap's `-try` mount skipped (see
 * `_mount_watch.ts`). Every mount but the writable `-try` binds: a protecting `--ro-bind-try` of
 * a path the plan found (a nested repository's git directory) counts too (`optional`: watched when
 * its source is there as the sandbox starts), as one the model made bwrap skip, by renaming a
 * parent while the sandbox was set up, left the user's `.git` writable (attack round 30 m02).
 */
export function mountPointsInRoots(plan: SandboxPlan): { path: string; optional: boolean }[] {
  const out = new Map<string, boolean>();
  for (const o of mountOps(plan).ops) {
    if ((o.optional && o.rank !== 3) || !plan.roots.some((r) => within(o.path, r))) continue;
    out.set(o.path, (out.get(o.path) ?? true) && o.optional === true);
  }
  return [...out].map(([path, optional]) => ({ path, optional }));
}

function mountOps(
  plan: SandboxPlan,
  workspaceFd?: number,
  rootFds?: readonly number[],
  revealFds?: readonly number[],
  sizeTmpfs = true,
): { ops: MountOp[]; late: string[] } {
  // Each root bound from a descriptor, by path; the deepest one holding a source gives it.
  const fds = new Map<string, number>();
  if (workspaceFd !== undefined) fds.set(plan.roots[0]!, workspaceFd);
  if (rootFds !== undefined && plan.rootIds?.length === rootFds.length) {
    plan.rootIds.forEach((id, i) => fds.set(id.path, rootFds[i]!));
  }
  const holder = (p: string) =>
    [...fds.keys()].filter((r) => p === r || p.startsWith(r === "/" ? "/" : r + "/"))
      .sort((a, b) => b.length - a.length)[0];
  const src = (p: string) => {
    const root = holder(p);
    if (root === undefined) return p;
    const rel = p.slice(root.length).replace(/^\/+/, "");
    return `/proc/self/fd/${fds.get(root)}${rel === "" ? "" : "/" + rel}`;
  };
  const sized = (bytes: number) => sizeTmpfs ? ["--size", String(bytes)] : [];
  const ops: MountOp[] = [
    { path: "/tmp", rank: 0, args: [...sized(TMP_BYTES), "--tmpfs", "/tmp"] },
    { path: "/dev/shm", rank: 0, args: [...sized(SHM_BYTES), "--tmpfs", "/dev/shm"] },
  ];
  const late: string[] = [];
  const shown = shownUnderTmp(plan);
  for (const p of [...plan.hideDirs, ...(plan.privateDirs ?? [])]) {
    if (!shown(p)) continue;
    ops.push({ path: p, rank: 1, args: ["--tmpfs", p] });
    late.push("--remount-ro", p);
  }
  for (const p of plan.hideFiles) {
    if (!shown(p)) continue;
    ops.push({ path: p, rank: 1, args: ["--ro-bind", "/dev/null", p] });
  }
  for (const p of plan.roots) {
    const fd = fds.get(p);
    const args = fd !== undefined
      ? [plan.writableRoots ? "--bind-fd" : "--ro-bind-fd", String(fd), p]
      : [plan.writableRoots ? "--bind" : "--ro-bind", src(p), p];
    ops.push({ path: p, rank: 2, args });
  }
  for (const p of plan.pinned ?? []) ops.push({ path: p, rank: 2, args: ["--bind", src(p), p] });
  for (const p of plan.pinnedTry ?? []) {
    ops.push({ path: p, rank: 2, args: ["--bind-try", src(p), p], optional: true });
  }
  for (const p of plan.protect) ops.push({ path: p, rank: 3, args: ["--ro-bind", src(p), p] });
  const reveals = plan.reveals ?? [];
  const revealFd = revealFds?.length === reveals.length ? revealFds : undefined;
  reveals.forEach((r, i) => {
    const args = revealFd !== undefined
      ? ["--ro-bind-fd", String(revealFd[i]), r.target]
      : ["--ro-bind", src(r.source), r.target];
    ops.push({ path: r.target, rank: 3, args });
  });
  for (const p of plan.protectTry ?? []) {
    ops.push({ path: p, rank: 3, args: ["--ro-bind-try", src(p), p], optional: true });
  }
  for (const p of plan.protectMissing) {
    ops.push({ path: p, rank: 3, args: ["--tmpfs", p] });
    late.push("--remount-ro", p);
  }
  return { ops, late };
}

/** `--setenv NAME VALUE` for every variable of `env`, sorted by name. */
export function bwrapEnvArgs(env: Record<string, string>): string[] {
  return Object.keys(env).sort().flatMap((k) => ["--setenv", k, env[k]!]);
}

/**
 * The bwrap arguments (everything after the `bwrap` binary) that run
 * `command` under `plan`: new user, PID, IPC, UTS and cgroup namespaces
 * (plus network when it is off), read-only root, private `/dev`, `/proc` and
 * `/tmp`, every capability dropped (required when the caller is root), a new
 * session, death with the parent, a cleared environment (or, with
 * `commandIsInit`, the command as PID 1 setting its own), and (when the
 * caller feeds one) the seccomp filter of `seccomp.ts`.
 */
export function bwrapArgv(plan: SandboxPlan, command: string[], opts: BwrapOptions = {}): string[] {
  const args = ["--unshare-user"];
  if (opts.disableUserns ?? true) args.push("--disable-userns");
  args.push("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try");
  if (!plan.network) args.push("--unshare-net");
  args.push("--die-with-parent", "--new-session");
  args.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc");
  // The kernel's settings and triggers under /proc are checked against the writer's uid only:
  // a command of a penguin run as root could set kernel.core_pattern (a program the kernel then
  // runs as root on the host) or write /proc/sysrq-trigger. Read-only, whoever runs penguin.
  args.push("--ro-bind", "/proc/sys", "/proc/sys");
  for (const p of ["/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"]) {
    args.push("--ro-bind-try", p, p);
  }
  args.push(
    ...bwrapMountArgs(
      plan,
      plan.workspaceId ? opts.workspaceFd : undefined,
      opts.rootFds,
      opts.revealFds,
      opts.sizeTmpfs ?? true,
    ),
    ...(opts.ownBinds ?? []),
    // The rest of /dev (bwrap's own tmpfs) is read-only: no unbounded tmpfs there (what is still
    // unbounded: docs/security.md "Memory-backed files").
    "--remount-ro",
    "/dev",
  );
  args.push("--cap-drop", "ALL", "--chdir", plan.cwd);
  if (opts.commandIsInit) args.push("--as-pid-1");
  else args.push("--clearenv");
  if (opts.seccompFd !== undefined) args.push("--seccomp", String(opts.seccompFd));
  if (opts.infoFd !== undefined) args.push("--info-fd", String(opts.infoFd));
  if (opts.commandIsInit) {
    // The environment comes from the wrapper.
  } else if (opts.envFd !== undefined) args.push("--args", String(opts.envFd));
  else args.push(...bwrapEnvArgs(plan.env));
  args.push("--", ...command);
  return args;
}
