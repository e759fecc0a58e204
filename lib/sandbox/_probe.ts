/**
 * The machinery behind `detect.ts`: locate bash and bubblewrap, read the
 * kernel facts, and run the probe command inside a real sandbox.
 *
 * @module
 */
import { join } from "node:path";
import { errorMessage } from "../protocol/errors.ts";
import { startSupervised } from "./_process.ts";
import { SECCOMP_FD, wrapperArgv } from "./_supervisor.ts";
import { bwrapArgv } from "./bwrap.ts";
import { DEFAULT_PATH } from "./env.ts";
import { isInside, planPathVanished, resolvePlan, type SandboxPlan } from "./plan.ts";
import { holdPlaceholders } from "./_placeholders.ts";
import { createPolicy, DEFAULT_MAX_PROCESSES } from "./policy.ts";
import { SANDBOX_EXEC } from "./seatbelt.ts";
import { runFactScript } from "./_fact_script.ts";
import { seccompEscapes } from "./seccomp.ts";
import { isExecutable, pathDirs } from "./_executables.ts";

export { findBash, isExecutable } from "./_executables.ts";

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
if [ -n "$1" ] && [ -x "$1" ] && [ "$2" = version ]; then v=$("$1" --version 2>&1); printf 'bwrap-version %s\\n' "\${v%%$'\\n'*}"; fi
sp=$(command -v setpriv) && "$sp" --help 2>&1 | grep -q -- --pdeathsig && printf 'setpriv %s\\n' "$sp"
if [ -x ${SANDBOX_EXEC} ]; then printf 'sandbox-exec %s\\n' "$(${SANDBOX_EXEC} -p '(version 1)(allow default)' /usr/bin/true 2>&1 && echo works)"; fi
exit 0
`;

/**
 * Kernel and tool facts, gathered by one bash run (Deno may not read /proc/sys); bubblewrap's
 * version (`bwrap-version`) only with `version`: it decides nothing (the probe tries
 * `--disable-userns` instead) and costs a run of bwrap.
 */
export async function facts(
  bash: string,
  bwrap: string | undefined,
  version = false,
): Promise<Map<string, string>> {
  const ran = await runFactScript(
    bash,
    ["-c", FACTS, "penguin-facts", bwrap ?? "", version ? "version" : ""],
  );
  return ran.facts;
}

/** Runs inside the probe sandbox; prints what it can observe. */
const PROBE =
  `if ( : >/.penguin-probe ) 2>/dev/null; then echo root=writable; rm -f /.penguin-probe; else echo root=readonly; fi
while read -r k v; do
  case $k in CapEff:) echo "cap=$v" ;; Seccomp:) echo "seccomp=$v" ;; Seccomp_filters:) echo "filters=$v" ;; esac
done </proc/self/status
echo "pid=$$"
n=0; while read -r l; do n=$((n+1)); done </proc/net/dev; echo "netdevs=$((n-2))"
if ( : >probe-write ) 2>/dev/null; then echo ws=writable; fi
echo "nproc=$(ulimit -u)"
`;

/** Result of one probe run. */
export interface ProbeRun {
  ok: boolean;
  ms: number;
  values: Map<string, string>;
  error?: string;
}

/** Plans of the probe retried when a path they name went away before bwrap got to it. */
const VANISHED_RETRIES = 3;

/** Run the probe under the full bwrap flag set (seccomp filter included) in a fresh temp workspace. */
export async function runProbe(
  bash: string,
  bwrap: string,
  setpriv: string | undefined,
  network: boolean,
  disableUserns: boolean,
  sizeTmpfs = true,
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
    // The probe tests the machine: other data roots come and go, and are no concern of it.
    policy.hideOtherDataRoots = false;
    for (let attempt = 0;; attempt++) {
      const plan = await resolvePlan(policy, dir, { check: true }); // only its own script runs
      const run = await probeOnce({ bash, bwrap, setpriv, disableUserns, sizeTmpfs, dir, plan });
      // A path of the plan removed meanwhile (another process's directory) tells nothing of the
      // machine: plan again.
      if (run.ok || attempt >= VANISHED_RETRIES || !planPathVanished(plan, run.error)) {
        return { ...run, ms: performance.now() - started };
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** One start of the probe sandbox for `plan`. */
async function probeOnce(o: {
  bash: string;
  bwrap: string;
  setpriv: string | undefined;
  disableUserns: boolean;
  sizeTmpfs: boolean;
  dir: string;
  plan: SandboxPlan;
}): Promise<ProbeRun> {
  // The fresh workspace has no .git: a stand-in, not kept for a session (the directory goes).
  let release = async () => {};
  try {
    release = await holdPlaceholders(o.plan.placeholders ?? [], [], { keep: false });
    const inner = wrapperArgv(o.bash, [o.bash, "-c", PROBE], {
      maxProcesses: DEFAULT_MAX_PROCESSES,
      control: true,
      init: true,
    });
    let text = "";
    const child = await startSupervised({
      bash: o.bash,
      setpriv: o.setpriv,
      kind: "ns",
      job: [
        o.bwrap,
        ...bwrapArgv(o.plan, inner, {
          seccompFd: SECCOMP_FD,
          commandIsInit: true,
          disableUserns: o.disableUserns,
          sizeTmpfs: o.sizeTmpfs,
        }),
      ],
      seccomp: true,
      env: { PATH: DEFAULT_PATH, __PSE_0: `PATH=${DEFAULT_PATH}`, __PSF: seccompEscapes() },
      cwd: o.dir,
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
    if (status.code !== 0) {
      return {
        ok: false,
        ms: 0,
        values,
        error: `probe exited with code ${status.code}: ${text.trim()}`,
      };
    }
    return { ok: true, ms: 0, values };
  } catch (err) {
    return {
      ok: false,
      ms: 0,
      values: new Map(),
      error: errorMessage(err).replace(
        /^Cannot start the sandbox probe: (the sandbox failed to set up: )?/,
        "",
      )
        .replace(/\.$/, ""),
    };
  } finally {
    await release();
  }
}
