/**
 * Find out, once per process, whether sandboxed children can run here: is
 * bubblewrap installed, are user namespaces allowed, does a trivial command
 * run under the full flag set and is it really confined. Every check carries
 * a human explanation and, when it fails, how to fix it.
 *
 * @module
 */
import { join } from "node:path";
import { errorMessage } from "../protocol/errors.ts";
import { type SandboxKind, startSupervised } from "./_process.ts";
import { wrapperArgv } from "./_supervisor.ts";
import { bwrapArgv } from "./bwrap.ts";
import { DEFAULT_PATH } from "./env.ts";
import { isInside, resolvePlan } from "./plan.ts";
import { createPolicy, DEFAULT_MAX_PROCESSES } from "./policy.ts";
import { SANDBOX_EXEC } from "./seatbelt.ts";
import { explainBwrapFailure, INSTALL_HINT, OPT_OUT } from "./_hints.ts";

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
  setpriv?: string;
  /** Whether bwrap takes `--disable-userns`. */
  disableUserns: boolean;
}

/** Options of {@linkcode detectSandbox}. */
export interface DetectOptions {
  /** Check this bubblewrap binary only. */
  bwrapPath?: string;
  /** Ignore the per-process cache. */
  refresh?: boolean;
}

const cache = new Map<string, Promise<SandboxReport>>();

/** Probe the machine (cached per process and `bwrapPath`). Never throws. */
export function detectSandbox(opts: DetectOptions = {}): Promise<SandboxReport> {
  const key = opts.bwrapPath ?? "";
  const hit = cache.get(key);
  if (hit && !opts.refresh) return hit;
  const report = probe(opts.bwrapPath).catch((err): SandboxReport => ({
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

async function isExecutable(path: string): Promise<boolean> {
  try {
    const s = await Deno.stat(path);
    return s.isFile && ((s.mode ?? 0o755) & 0o111) !== 0;
  } catch {
    return false;
  }
}

function pathDirs(): string[] {
  return (Deno.env.get("PATH") ?? "").split(":").filter((d) => d.startsWith("/"));
}

/**
 * The bash Deno's `--allow-run=bash` resolved at startup: the first `bash`
 * on the parent's PATH (Deno compares spawn paths literally).
 */
export async function findBash(): Promise<string | undefined> {
  for (const d of [...pathDirs(), "/usr/bin", "/bin"]) {
    if (await isExecutable(join(d, "bash"))) return join(d, "bash");
  }
  return undefined;
}

/** The bubblewrap binary: fixed locations first, then PATH entries outside the cwd. */
export async function findBwrap(): Promise<{ path?: string; looked: string[] }> {
  const cwd = Deno.cwd();
  const dirs = [
    "/usr/bin",
    "/usr/local/bin",
    "/bin",
    ...pathDirs().filter((d) => !isInside(d, cwd)),
  ];
  const looked = [...new Set(dirs.map((d) => join(d, "bwrap")))];
  for (const p of looked) if (await isExecutable(p)) return { path: p, looked };
  return { looked };
}

const FACTS =
  `for f in user/max_user_namespaces kernel/unprivileged_userns_clone kernel/apparmor_restrict_unprivileged_userns; do
  if [ -r "/proc/sys/$f" ]; then read -r v <"/proc/sys/$f" && printf 'sysctl:%s %s\\n' "$f" "$v"; fi
done
if [ -n "$1" ] && [ -x "$1" ]; then v=$("$1" --version 2>&1); printf 'bwrap-version %s\\n' "\${v%%$'\\n'*}"; fi
sp=$(command -v setpriv) && "$sp" --help 2>&1 | grep -q -- --pdeathsig && printf 'setpriv %s\\n' "$sp"
if [ -x ${SANDBOX_EXEC} ]; then printf 'sandbox-exec %s\\n' "$(${SANDBOX_EXEC} -p '(version 1)(allow default)' /usr/bin/true 2>&1 && echo works)"; fi
exit 0
`;

async function facts(bash: string, bwrap: string | undefined): Promise<Map<string, string>> {
  const out = await new Deno.Command(bash, {
    args: ["-c", FACTS, "penguin-facts", bwrap ?? ""],
    clearEnv: true,
    env: { PATH: DEFAULT_PATH, LANG: "C" },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  const map = new Map<string, string>();
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const sp = line.indexOf(" ");
    if (sp > 0) map.set(line.slice(0, sp), line.slice(sp + 1));
  }
  return map;
}

/** Runs inside the probe sandbox; prints what it can observe. */
const PROBE =
  `if ( : >/.penguin-probe ) 2>/dev/null; then echo root=writable; rm -f /.penguin-probe; else echo root=readonly; fi
while read -r k v; do [ "$k" = CapEff: ] && echo "cap=$v"; done </proc/self/status
echo "pid=$$"
n=0; while read -r l; do n=$((n+1)); done </proc/net/dev; echo "netdevs=$((n-2))"
if ( : >probe-write ) 2>/dev/null; then echo ws=writable; fi
echo "nproc=$(ulimit -u)"
`;

interface ProbeRun {
  ok: boolean;
  ms: number;
  values: Map<string, string>;
  error?: string;
}

async function runProbe(
  bash: string,
  bwrap: string,
  setpriv: string | undefined,
  network: boolean,
  disableUserns: boolean,
): Promise<ProbeRun> {
  const dir = await Deno.makeTempDir({ prefix: "penguin-sandbox-probe-" });
  const started = performance.now();
  try {
    const policy = createPolicy({
      workspace: dir,
      network,
      hostEnv: { PATH: DEFAULT_PATH },
      home: "",
    });
    policy.hideSockets = false;
    const plan = await resolvePlan(policy, dir);
    const inner = wrapperArgv(bash, [bash, "-c", PROBE], {
      maxProcesses: DEFAULT_MAX_PROCESSES,
      control: true,
    });
    let text = "";
    const child = await startSupervised({
      bash,
      setpriv,
      kind: "ns",
      job: [bwrap, ...bwrapArgv(plan, inner, { envFd: 3, disableUserns })],
      envFd: true,
      env: { PATH: DEFAULT_PATH, __PSE_0: `PATH=${DEFAULT_PATH}` },
      cwd: dir,
      stdin: "null",
      stdio: "merged",
      onOutput: (t) => text += t,
      killGraceMs: 200,
      sandbox: "bwrap",
      describe: "the sandbox probe",
    });
    const timer = setTimeout(() => child.kill(), 15_000);
    const status = await child.status.finally(() => clearTimeout(timer));
    await child.outputClosed;
    const values = new Map<string, string>();
    for (const line of text.split("\n")) {
      const eq = line.indexOf("=");
      if (eq > 0) values.set(line.slice(0, eq), line.slice(eq + 1));
    }
    const ms = performance.now() - started;
    if (status.code !== 0) {
      return {
        ok: false,
        ms,
        values,
        error: `probe exited with code ${status.code}: ${text.trim()}`,
      };
    }
    return { ok: true, ms, values };
  } catch (err) {
    return {
      ok: false,
      ms: performance.now() - started,
      values: new Map(),
      error: errorMessage(err),
    };
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

async function probe(bwrapPath: string | undefined): Promise<SandboxReport> {
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

  const found = bwrapPath
    ? { path: (await isExecutable(bwrapPath)) ? bwrapPath : undefined, looked: [bwrapPath] }
    : await findBwrap();
  const f = await facts(bash, found.path);
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
      detail: `${found.path} (${f.get("bwrap-version") ?? "unknown version"})`,
    });
  }

  const uid = Deno.uid() ?? -1;
  const max = f.get("sysctl:user/max_user_namespaces"),
    clone = f.get("sysctl:kernel/unprivileged_userns_clone"),
    aa = f.get("sysctl:kernel/apparmor_restrict_unprivileged_userns");
  const sysctls = [
    `user.max_user_namespaces=${max ?? "?"}`,
    ...(clone !== undefined ? [`kernel.unprivileged_userns_clone=${clone}`] : []),
    ...(aa !== undefined ? [`kernel.apparmor_restrict_unprivileged_userns=${aa}`] : []),
  ].join(", ");
  const userns: SandboxCheck = {
    name: "user namespaces",
    status: "ok",
    detail: `allowed (${sysctls})`,
  };
  if (max === "0") {
    Object.assign(userns, {
      status: "fail",
      detail: `disabled (${sysctls})`,
      fix: "sudo sysctl -w user.max_user_namespaces=15000",
    });
  } else if (clone === "0" && uid !== 0) {
    Object.assign(userns, {
      status: "fail",
      detail: `disabled for unprivileged users (${sysctls})`,
      fix: "sudo sysctl -w kernel.unprivileged_userns_clone=1",
    });
  } else if (aa === "1" && uid !== 0) {
    Object.assign(userns, {
      status: "warn",
      detail: `restricted by AppArmor (${sysctls}); works only if bwrap has an AppArmor profile`,
      fix:
        "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or install an AppArmor profile for bwrap",
    });
  }
  checks.push(userns);
  if (userns.status === "fail") fail(`user namespaces are disabled (${sysctls})`);
  if (!found.path) return finish(report);

  let run = await runProbe(bash, found.path, report.setpriv, false, true);
  if (!run.ok && /--disable-userns/.test(run.error ?? "")) {
    report.disableUserns = false;
    run = await runProbe(bash, found.path, report.setpriv, false, false);
  }
  let netOk = true;
  if (!run.ok) {
    const withNet = await runProbe(bash, found.path, report.setpriv, true, report.disableUserns);
    if (withNet.ok) netOk = false;
    else {
      const hint = explainBwrapFailure(run.error ?? "");
      checks.push({
        name: "sandbox start",
        status: "fail",
        detail: run.error ?? "failed",
        fix: hint,
      });
      if (/user namespace|uid map|setting up uid|Creating new namespace/i.test(run.error ?? "")) {
        userns.status = "fail";
      }
      fail(`bubblewrap cannot set up a sandbox: ${run.error}`);
      return finish(report);
    }
    run = withNet;
  }
  checks.push({
    name: "sandbox start",
    status: "ok",
    detail: `ran a command under the full flag set (${Math.round(run.ms)} ms)`,
  });

  const v = run.values;
  const problems: string[] = [];
  if (v.get("root") !== "readonly") problems.push("the root file system is writable");
  if (!/^0+$/.test(v.get("cap") ?? "")) {
    problems.push(`capabilities remain (CapEff ${v.get("cap") ?? "?"})`);
  }
  if (Number(v.get("pid")) > 10) problems.push(`no private PID namespace (pid ${v.get("pid")})`);
  if (v.get("ws") !== "writable") problems.push("the workspace is not writable");
  checks.push(
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
  if (problems.length > 0) fail(`the probe was not confined: ${problems.join("; ")}`);

  if (!netOk) {
    checks.push({
      name: "network isolation",
      status: "fail",
      detail: `--unshare-net fails: ${explainBwrapFailure(run.error ?? "")}`,
      fix: "allow network namespaces (see the user namespace fix) or run with --network on",
    });
    fail("bubblewrap cannot create a private network namespace");
  } else if (v.get("netdevs") !== "1") {
    checks.push({
      name: "network isolation",
      status: "fail",
      detail: `${v.get("netdevs")} interfaces visible`,
      fix: "report this as a penguin bug",
    });
    fail("the probe still saw host network interfaces");
  } else {
    checks.push({
      name: "network isolation",
      status: "ok",
      detail: "only loopback inside (--unshare-net)",
    });
  }

  checks.push(
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
  );
  checks.push(
    report.setpriv
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
  checks.push(
    uid === 0
      ? {
        name: "process limit",
        status: "warn",
        detail: "not enforced: penguin runs as root and the kernel exempts uid 0 from RLIMIT_NPROC",
        fix: "run penguin as an unprivileged user",
      }
      : {
        name: "process limit",
        status: "ok",
        detail: `RLIMIT_NPROC ${v.get("nproc") ?? "?"} inside the sandbox`,
      },
  );
  return finish(report, "bwrap");
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
