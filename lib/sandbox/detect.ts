/**
 * Find out, once per process, whether sandboxed children can run here: is
 * bubblewrap installed, are user namespaces allowed, does a trivial command
 * run under the full flag set and is it really confined. Every check carries
 * a human explanation and, when it fails, how to fix it.
 *
 * @module
 */
import { directShellPath } from "./_direct.ts";
import { errorMessage } from "../protocol/errors.ts";
import type { SandboxKind } from "./_process.ts";
import { facts, findBash, findBwrap, isExecutable, runProbe } from "./_probe.ts";
import { SANDBOX_EXEC } from "./seatbelt.ts";
import { explainBwrapFailure, INSTALL_HINT, OPT_OUT } from "./_hints.ts";
import { SECCOMP_BLOCKS, seccompArch } from "./seccomp.ts";
import { forget, probeKey, recall, remember } from "./_probe_cache.ts";

/** The pauses before the probe is run again after a failure to start its sandbox. */
const PROBE_RETRY_PAUSES_MS = [50, 500];

/** Bubblewrap's errors that tell of a namespace (or its loopback) it could not create. */
const NETNS_ERROR = /namespace|loopback|RTM_NEW|netlink|network|Operation not permitted/i;

export { findBash, findBwrap } from "./_probe.ts";

/** Outcome of one check. */
export type CheckStatus = "ok" | "warn" | "fail";

/** One line of `penguin sandbox check`. */
export interface SandboxCheck {
  /** Short name, e.g. "bubblewrap". */
  name: string;
  /** ok, warn (works, with a weaker guarantee) or fail (sandboxing impossible). */
  status: CheckStatus;
  /** What was found. */
  detail: string;
  /** How to fix it, when not ok. */
  fix?: string;
}

/** The seccomp filter as the probe found it (bubblewrap only). */
export interface SeccompReport {
  /** True when the probe ran under the filter (`Seccomp: 2` in its `/proc/self/status`). */
  installed: boolean;
  /** The architecture whose rules apply (`x86_64`, `aarch64`), or null when there are none. */
  arch: string | null;
  /** What the filter refuses. */
  blocks: string[];
}

/** What works on this machine. */
export interface SandboxReport {
  /** True when workspace-write and read-only children can be spawned. */
  usable: boolean;
  /** The mechanism penguin uses ("none" when not usable). */
  kind: SandboxKind;
  /** Every check, in order. */
  checks: SandboxCheck[];
  /** One sentence saying why sandboxing is impossible (when not usable). */
  failure?: string;
  /** The bash that runs supervisors and shell commands. */
  bash?: string;
  /** The bubblewrap binary in use. */
  bwrap?: string;
  /** setpriv supporting `--pdeathsig`, if any. */
  setpriv?: string | undefined;
  /** Whether bwrap takes `--disable-userns`. */
  disableUserns: boolean;
  /** Whether bwrap takes `--size` for its tmpfs mounts (not in setuid mode). */
  sizeTmpfs?: boolean;
  /** The seccomp filter, once a bubblewrap probe has run. */
  seccomp?: SeccompReport;
}

/** Options of {@linkcode detectSandbox}. */
export interface DetectOptions {
  /** Check this bubblewrap binary only. */
  bwrapPath?: string;
  /** Ignore the per-process cache and the answer remembered between processes (`_probe_cache.ts`). */
  refresh?: boolean;
  /**
   * Also ask bubblewrap for its version, shown in the check's detail (`penguin sandbox check`):
   * nothing depends on it, so a command's probe does not run `bwrap --version`.
   */
  version?: boolean;
}

const cache = new Map<string, Promise<SandboxReport>>();

/** Where bubblewrap was looked for and found, per `bwrapPath` (the probe's answer and the workspace check's). */
const locations = new Map<string, Promise<BwrapLocation>>();

/** The bubblewrap binary in use (the explicit one, else the first found), and where it was looked for. */
export interface BwrapLocation {
  /** The binary, when there is one. */
  path?: string;
  /** Every place looked at. */
  looked: string[];
}

/** The bubblewrap `detectSandbox()` uses when given none (tests only; undefined: search). */
let pinnedBwrap: string | undefined;

/**
 * Make `detectSandbox()` without a `bwrapPath` use `path` (tests only: a
 * bubblewrap that waits or fails); undefined restores the search. Forgets
 * every cached report.
 */
export function _pinDefaultBwrap(path: string | undefined): void {
  pinnedBwrap = path;
  cache.clear();
  locations.clear();
}

/**
 * The bubblewrap binary {@linkcode detectSandbox} probes and commands run
 * (Linux only: none elsewhere), without starting anything: cached per
 * process and `bwrapPath`, shared with the probe, so both name one binary.
 */
export function locateBwrap(opts: DetectOptions = {}): Promise<BwrapLocation> {
  if (Deno.build.os !== "linux") return Promise.resolve({ looked: [] });
  const explicit = opts.bwrapPath ?? pinnedBwrap;
  const key = opts.bwrapPath ?? "";
  const hit = locations.get(key);
  if (hit && !opts.refresh) return hit;
  const found = explicit
    ? isExecutable(explicit).then((ok) => ({
      ...(ok ? { path: explicit } : {}),
      looked: [explicit],
    }))
    : findBwrap();
  locations.set(key, found);
  return found;
}

/**
 * Probe the machine (cached per process and `bwrapPath`, and between
 * processes as `_probe_cache.ts` says). Never throws.
 */
export function detectSandbox(opts: DetectOptions = {}): Promise<SandboxReport> {
  const key = opts.bwrapPath ?? "";
  const hit = cache.get(key);
  if (hit && !opts.refresh && !opts.version) return hit;
  const report = probeOrRecall(opts).catch((err): SandboxReport => ({
    usable: false,
    kind: "none",
    checks: [{
      name: "probe",
      status: "fail",
      detail: `the probe itself failed: ${errorMessage(err)}`,
    }],
    failure: `probing the sandbox failed: ${errorMessage(err)}`,
    disableUserns: false,
  }));
  cache.set(key, report);
  return report;
}

/** Reports taken from the answer an earlier process remembered. */
const recalled = new WeakSet<SandboxReport>();

/**
 * When `report` is a remembered answer (not this process's probe), forget it
 * here and on disk and probe again: a sandbox that failed to start under it
 * may have found the machine changed. The new report, or undefined when
 * `report` was this process's own probe.
 */
export async function reprobeRemembered(
  report: SandboxReport,
  opts: DetectOptions = {},
): Promise<SandboxReport | undefined> {
  if (!recalled.has(report)) return undefined;
  recalled.delete(report);
  await forget();
  const again = await detectSandbox({ ...opts, refresh: true });
  // A failing answer is not kept for this process: the next command probes once more, so one
  // failure under load does not refuse every later command of a long session.
  if (!again.usable) cache.delete(opts.bwrapPath ?? "");
  return again;
}

/**
 * The answer an earlier process remembered for this machine and these binaries, else a probe
 * (remembered when it found everything working; always with `refresh` or `version`).
 */
async function probeOrRecall(opts: DetectOptions): Promise<SandboxReport> {
  if (Deno.build.os !== "linux") return await probe(opts);
  const [bash, found] = await Promise.all([findBash(), locateBwrap(opts)]);
  const key = bash && found.path ? await probeKey(bash, found.path) : undefined;
  if (bash && found.path && key !== undefined && !opts.refresh && !opts.version) {
    const kept = await recall(key);
    if (kept !== undefined) {
      const report: SandboxReport = { ...kept, bash, bwrap: found.path };
      recalled.add(report);
      return report;
    }
  }
  const report = await probe(opts);
  // Only what the probe ran with: the key's binaries.
  if (key !== undefined && report.bash === bash && report.bwrap === found.path) {
    await remember(key, report);
  }
  return report;
}

/** The arguments of a probe run with the flags `report` has found this bubblewrap takes. */
function probeArgs(
  bash: string,
  bwrap: string,
  report: SandboxReport,
  network: boolean,
): Parameters<typeof runProbe> {
  return [bash, bwrap, report.setpriv, network, report.disableUserns, report.sizeTmpfs !== false];
}

async function probe(opts: DetectOptions): Promise<SandboxReport> {
  // Long because: the probe steps in the order they depend on each other (bash, platform, bwrap,
  // namespaces, the confined run, the network), each adding to one report.
  const checks: SandboxCheck[] = [];
  const report: SandboxReport = { usable: false, kind: "none", checks, disableUserns: true };
  const fail = (why: string) => {
    report.failure ??= why;
  };
  const bash = await findBash();
  if (!bash) {
    checks.push({ name: "bash", status: "fail", detail: "no bash on PATH", fix: "install bash" });
    fail("bash is not installed");
    return report;
  }
  report.bash = bash;
  checks.push({ name: "bash", status: "ok", detail: bash });

  if (Deno.build.os === "darwin") return await probeDarwin(report, bash);
  if (Deno.build.os !== "linux") {
    checks.push({
      name: "platform",
      status: "fail",
      detail: `${Deno.build.os} has no supported sandbox`,
    });
    fail(`penguin has no sandbox for ${Deno.build.os}`);
    return report;
  }

  const found = await locateBwrap(opts);
  const f = await facts(bash, found.path, opts.version === true);
  report.setpriv = f.get("setpriv");
  if (!found.path) {
    checks.push({
      name: "bubblewrap",
      status: "fail",
      detail: `not found (looked at ${found.looked.join(", ")})`,
      fix: INSTALL_HINT,
    });
    fail("bubblewrap (bwrap) is not installed");
  } else {
    report.bwrap = found.path;
    checks.push({
      name: "bubblewrap",
      status: "ok",
      detail: opts.version
        ? `${found.path} (${f.get("bwrap-version") ?? "unknown version"})`
        : found.path,
    });
  }

  const uid = Deno.uid() ?? -1;
  const userns = usernsCheck(f, uid);
  checks.push(userns);
  if (userns.status === "fail") fail(`user namespaces are ${userns.detail}`);
  if (!found.path) return finish(report);

  report.sizeTmpfs = true;
  let run = await runProbe(bash, found.path, report.setpriv, false, true, true);
  // Each flag dropped when this bubblewrap refuses it: an older one has neither (or only --size),
  // a setuid one refuses --size alone and keeps --disable-userns.
  for (let i = 0; i < 2 && !run.ok; i++) {
    if (/--disable-userns/.test(run.error ?? "")) report.disableUserns = false;
    else if (/--size/.test(run.error ?? "")) report.sizeTmpfs = false;
    else break;
    run = await runProbe(...probeArgs(bash, found.path, report, false));
  }
  // A namespace can fail to come up under load (the kernel frees old ones late, network
  // namespaces on a work queue): the probe runs twice more, after a short pause each, before it
  // concludes anything from the failure.
  for (const pauseMs of PROBE_RETRY_PAUSES_MS) {
    if (run.ok) break;
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    const again = await runProbe(...probeArgs(bash, found.path, report, false));
    if (again.ok) run = again;
  }
  let netError: string | undefined;
  if (!run.ok) {
    const withNet = await runProbe(...probeArgs(bash, found.path, report, true));
    // Only an error about namespaces means the machine lacks a network namespace; a run without
    // network that failed otherwise (a path gone under load) is tried once more.
    if (withNet.ok && !NETNS_ERROR.test(run.error ?? "")) {
      run = await runProbe(...probeArgs(bash, found.path, report, false));
    }
    if (!run.ok && withNet.ok && NETNS_ERROR.test(run.error ?? "")) {
      netError = run.error ?? "failed";
      run = withNet;
    } else if (!run.ok) {
      const hint = explainBwrapFailure(run.error ?? "");
      checks.push({
        name: "sandbox start",
        status: "fail",
        detail: run.error ?? "failed",
        fix: hint,
      });
      if (/user namespace|uid map|setting up uid|Creating new namespace/i.test(run.error ?? "")) {
        userns.status = "fail";
        userns.detail = `blocked: bubblewrap could not create one (${
          userns.detail.replace(/^.*?\((.*)\)$/, "$1")
        })`;
        userns.fix ??= hint;
      }
      fail(`bubblewrap cannot set up a sandbox: ${run.error}`);
      return finish(report);
    }
  }
  checks.push({
    name: "sandbox start",
    status: "ok",
    detail: `ran a command under the full flag set (${Math.round(run.ms)} ms)`,
  });

  checks.push(...observedChecks(report, run.values, netError, uid));
  return finish(report, "bwrap");
}

/** The user-namespace check from the kernel's sysctls. */
function usernsCheck(f: Map<string, string>, uid: number): SandboxCheck {
  const max = f.get("sysctl:user/max_user_namespaces"),
    clone = f.get("sysctl:kernel/unprivileged_userns_clone"),
    aa = f.get("sysctl:kernel/apparmor_restrict_unprivileged_userns");
  const sysctls = [
    `user.max_user_namespaces=${max ?? "?"}`,
    ...(clone !== undefined ? [`kernel.unprivileged_userns_clone=${clone}`] : []),
    ...(aa !== undefined ? [`kernel.apparmor_restrict_unprivileged_userns=${aa}`] : []),
  ].join(", ");
  const check: SandboxCheck = {
    name: "user namespaces",
    status: "ok",
    detail: `allowed (${sysctls})`,
  };
  if (max === "0") {
    Object.assign(check, {
      status: "fail",
      detail: `disabled (${sysctls})`,
      fix: "sudo sysctl -w user.max_user_namespaces=15000",
    });
  } else if (clone === "0" && uid !== 0) {
    Object.assign(check, {
      status: "fail",
      detail: `disabled for unprivileged users (${sysctls})`,
      fix: "sudo sysctl -w kernel.unprivileged_userns_clone=1",
    });
  } else if (aa === "1" && uid !== 0) {
    Object.assign(check, {
      status: "warn",
      detail: `restricted by AppArmor (${sysctls}); works only if bwrap has an AppArmor profile`,
      fix:
        "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or install an AppArmor profile for bwrap",
    });
  }
  return check;
}

/** Confinement and system call filter checks on what the probe saw (records the seccomp facts). */
function confinementChecks(report: SandboxReport, v: Map<string, string>): SandboxCheck[] {
  const out: SandboxCheck[] = [];
  const problems: string[] = [];
  if (v.get("root") !== "readonly") problems.push("the root file system is writable");
  if (!/^0+$/.test(v.get("cap") ?? "")) {
    problems.push(`capabilities remain (CapEff ${v.get("cap") ?? "?"})`);
  }
  if (Number(v.get("pid")) > 10) problems.push(`no private PID namespace (pid ${v.get("pid")})`);
  const arch = seccompArch() ?? null;
  const filtered = v.get("seccomp") === "2" && Number(v.get("filters") ?? "1") >= 1;
  report.seccomp = { installed: filtered, arch, blocks: [...SECCOMP_BLOCKS] };
  if (!filtered || arch === null) {
    problems.push(
      arch === null
        ? `the system call filter has no rules for ${Deno.build.arch}`
        : `the system call filter is not installed (Seccomp: ${v.get("seccomp") ?? "?"})`,
    );
  }
  if (v.get("ws") !== "writable") problems.push("the workspace is not writable");
  out.push(
    problems.length === 0
      ? {
        name: "confinement",
        status: "ok",
        detail: "read-only root, no capabilities, private PID namespace, writable workspace",
      }
      : {
        name: "confinement",
        status: "fail",
        detail: problems.join("; "),
        fix: "report this as a penguin bug",
      },
  );
  if (problems.length > 0) report.failure ??= `the probe was not confined: ${problems.join("; ")}`;
  if (filtered && arch !== null) {
    out.push({
      name: "system call filter",
      status: "ok",
      detail: `seccomp (${arch}) refuses ${SECCOMP_BLOCKS.join("; ")}`,
    });
  }
  return out;
}

/** The network isolation check: a private network namespace with only loopback inside. */
function networkCheck(
  report: SandboxReport,
  v: Map<string, string>,
  netError: string | undefined,
): SandboxCheck {
  if (netError !== undefined) {
    report.failure ??= "bubblewrap cannot create a private network namespace";
    return {
      name: "network isolation",
      status: "fail",
      detail: `--unshare-net fails: ${explainBwrapFailure(netError)}`,
      fix: `allow network namespaces (see the user namespace fix), ${OPT_OUT}`,
    };
  }
  if (v.get("netdevs") !== "1") {
    report.failure ??= "the probe still saw host network interfaces";
    return {
      name: "network isolation",
      status: "fail",
      detail: `${v.get("netdevs")} interfaces visible`,
      fix: "report this as a penguin bug",
    };
  }
  return {
    name: "network isolation",
    status: "ok",
    detail: "only loopback inside (--unshare-net)",
  };
}

/**
 * Checks on optional hardening: nested user namespaces, bounded memory-backed files, the
 * sandbox's lifetime, the process limit.
 */
function hardeningChecks(
  report: SandboxReport,
  v: Map<string, string>,
  uid: number,
): SandboxCheck[] {
  const out: SandboxCheck[] = [];
  out.push(
    report.disableUserns
      ? {
        name: "nested user namespaces",
        status: "ok",
        detail: "blocked inside (--disable-userns)",
      }
      : {
        name: "nested user namespaces",
        status: "warn",
        detail: "allowed inside: this bubblewrap has no --disable-userns (needs 0.8.0+)",
        fix: "upgrade bubblewrap",
      },
    report.sizeTmpfs !== false
      ? {
        name: "memory-backed files",
        status: "ok",
        detail: "/tmp 1 GiB, /dev/shm 256 MiB (--size)",
      }
      : {
        name: "memory-backed files",
        status: "warn",
        detail: "/tmp and /dev/shm unbounded: this bubblewrap takes no --size (needs 0.7.0+, " +
          "not setuid)",
        fix: "upgrade bubblewrap, or install it without the setuid bit",
      },
  );
  const sh = directShellPath();
  out.push(
    sh
      ? {
        name: "lifetime",
        status: "ok",
        detail: `bwrap is penguin's own child (started by ${sh}), --die-with-parent: ` +
          "sandboxes die with penguin",
      }
      : report.setpriv
      ? {
        name: "lifetime",
        status: "ok",
        detail: `${report.setpriv} --pdeathsig: sandboxes die with penguin`,
      }
      : {
        name: "lifetime",
        status: "warn",
        detail:
          "no setpriv with --pdeathsig: a sandbox outlives penguin if penguin is killed with SIGKILL",
        fix: "install util-linux 2.33 or newer",
      },
  );
  out.push(
    uid === 0
      ? {
        name: "process limit",
        status: "warn",
        detail:
          "not enforced: penguin runs as root and the kernel exempts uid 0 from RLIMIT_NPROC; " +
          "a fork bomb still dies with its command (the sandbox's PID namespace is torn down)",
        fix: "run penguin as an unprivileged user",
      }
      : {
        name: "process limit",
        status: "ok",
        detail: `RLIMIT_NPROC ${v.get("nproc") ?? "?"} inside the sandbox`,
      },
  );
  return out;
}

/** Checks on what the probe observed inside the sandbox, and on optional hardening. */
function observedChecks(
  report: SandboxReport,
  v: Map<string, string>,
  netError: string | undefined,
  uid: number,
): SandboxCheck[] {
  return [
    ...confinementChecks(report, v),
    networkCheck(report, v, netError),
    ...hardeningChecks(report, v, uid),
  ];
}

function finish(report: SandboxReport, kind: SandboxKind = "none"): SandboxReport {
  report.usable = report.checks.every((c) => c.status !== "fail");
  report.kind = report.usable ? kind : "none";
  if (!report.usable) report.failure ??= "a sandbox check failed";
  return report;
}

async function probeDarwin(report: SandboxReport, bash: string): Promise<SandboxReport> {
  const f = await facts(bash, undefined);
  const se = f.get("sandbox-exec");
  if (se === undefined) {
    report.checks.push({
      name: "sandbox-exec",
      status: "fail",
      detail: `${SANDBOX_EXEC} not found`,
      fix: OPT_OUT,
    });
    report.failure = `${SANDBOX_EXEC} is missing`;
  } else if (!se.endsWith("works")) {
    report.checks.push({
      name: "sandbox-exec",
      status: "fail",
      detail: `a trivial profile fails: ${se}`,
      fix: OPT_OUT,
    });
    report.failure = `${SANDBOX_EXEC} cannot apply a profile (is penguin itself sandboxed?)`;
  } else {
    report.checks.push({
      name: "sandbox-exec",
      status: "ok",
      detail: `${SANDBOX_EXEC} applies profiles`,
    });
  }
  return finish(report, "seatbelt");
}
