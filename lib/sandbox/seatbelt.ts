/**
 * The macOS Seatbelt (`sandbox-exec`) profile for a {@linkcode SandboxPlan}:
 * pure text generation, tested as text (it cannot run on Linux).
 *
 * Paths never appear in the profile itself; the profile names them as
 * `(param "WRITABLE_0")` and the values go on the command line as
 * `-DWRITABLE_0=/path`, so no path can inject SBPL. The profile only ever
 * *allows*; exclusions are `require-not` clauses inside the allow rules, so
 * the result does not depend on rule order.
 *
 * @module
 */
import type { SandboxPlan } from "./plan.ts";

/** The `sandbox-exec` binary, always by absolute path. */
export const SANDBOX_EXEC = "/usr/bin/sandbox-exec";

/** A generated profile and the parameters it references. */
export interface SeatbeltProfile {
  /** SBPL text. */
  profile: string;
  /** Parameter values, passed as `-D<name>=<value>`. */
  params: Record<string, string>;
}

/** Options of {@linkcode seatbeltProfile}. */
export interface SeatbeltOptions {
  /** Writable temporary directories (macOS: `/private/tmp` and the per-user `$TMPDIR`). */
  tmpDirs?: string[];
}

const BASE = `(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow pseudo-tty)
(allow file-ioctl (literal "/dev/tty") (literal "/dev/null"))
(allow file-write-data
  (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (literal "/dev/dtracehelper"))
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.coreservices.launchservicesd"))
(allow ipc-posix-shm-read-data ipc-posix-shm-read-metadata)
`;

const NETWORK = `(allow network-outbound)
(allow network-inbound)
(allow network-bind)
(allow system-socket)
(allow mach-lookup
  (global-name "com.apple.SystemConfiguration.configd")
  (global-name "com.apple.SystemConfiguration.DNSConfiguration")
  (global-name "com.apple.trustd.agent")
  (global-name "com.apple.networkd"))
`;

function params(prefix: string, paths: string[], out: Record<string, string>): string[] {
  return paths.map((p, i) => {
    const name = `${prefix}_${i}`;
    out[name] = p;
    return name;
  });
}

function notUnder(names: string[], dirs: boolean[]): string[] {
  return names.map((n, i) => `(require-not (${dirs[i] ? "subpath" : "literal"} (param "${n}")))`);
}

/**
 * The profile for `plan`: deny by default; read everything except the hidden
 * paths (the roots stay readable even inside a hidden directory); write only
 * the writable roots and the temporary directories, never the protected
 * paths; network only when `plan.network`.
 */
export function seatbeltProfile(plan: SandboxPlan, opts: SeatbeltOptions = {}): SeatbeltProfile {
  const values: Record<string, string> = {};
  const roots = params("ROOT", plan.roots, values);
  const dirs = [...plan.hideDirs, ...(plan.privateDirs ?? [])];
  const hidden = params("HIDE", [...dirs, ...plan.hideFiles], values);
  const hiddenIsDir = [...dirs.map(() => true), ...plan.hideFiles.map(() => false)];
  const protect = params(
    "PROTECT",
    [...plan.protect, ...plan.protectMissing, ...(plan.protectTry ?? [])],
    values,
  );
  const tmp = params("TMP", opts.tmpDirs ?? ["/private/tmp"], values);

  const lines = [BASE];
  const readAll = hidden.length === 0
    ? `(allow file-read* (subpath "/"))`
    : `(allow file-read*\n  (require-all (subpath "/")\n    ${
      notUnder(hidden, hiddenIsDir).join("\n    ")
    }))`;
  lines.push(readAll);
  if (roots.length > 0) {
    lines.push(`(allow file-read* ${roots.map((r) => `(subpath (param "${r}"))`).join(" ")})`);
  }
  // Toolchain directories of the hidden home: readable where they lie and by their home path.
  const shown = params(
    "REVEAL",
    (plan.reveals ?? []).flatMap((r) => r.source === r.target ? [r.source] : [r.source, r.target]),
    values,
  );
  if (shown.length > 0) {
    lines.push(`(allow file-read* ${shown.map((r) => `(subpath (param "${r}"))`).join(" ")})`);
  }
  const writeTargets = [...(plan.writableRoots ? roots : []), ...tmp].map((r) =>
    `(subpath (param "${r}"))`
  );
  if (writeTargets.length > 0) {
    const guard = protect.flatMap((
      p,
    ) => [`(require-not (literal (param "${p}")))`, `(require-not (subpath (param "${p}")))`]);
    lines.push(
      guard.length === 0
        ? `(allow file-write* ${writeTargets.join(" ")})`
        : `(allow file-write*\n  (require-all (require-any ${writeTargets.join(" ")})\n    ${
          guard.join("\n    ")
        }))`,
    );
  }
  // Subdirectories of a sealed home: writable although their parent is protected.
  if (plan.writableRoots) {
    for (const [i, p] of (plan.pinned ?? []).entries()) {
      const name = `PINNED_${i}`;
      values[name] = p;
      const inner = protect.filter((_, k) => {
        const q = [...plan.protect, ...plan.protectMissing][k]!;
        return q !== p && q.startsWith(p + "/");
      });
      const guard = inner.flatMap((q) => [
        `(require-not (literal (param "${q}")))`,
        `(require-not (subpath (param "${q}")))`,
      ]);
      const rule = guard.length === 0
        ? `(allow file-write* (subpath (param "${name}")))`
        : `(allow file-write*\n  (require-all (subpath (param "${name}"))\n    ${
          guard.join("\n    ")
        }))`;
      lines.push(rule);
    }
  }
  if (plan.network) lines.push(NETWORK);
  return { profile: lines.join("\n") + "\n", params: values };
}

/** The full `sandbox-exec` argv (binary first) that runs `command` under `plan`. */
export function seatbeltArgv(
  plan: SandboxPlan,
  command: string[],
  opts: SeatbeltOptions = {},
): string[] {
  const { profile, params: values } = seatbeltProfile(plan, opts);
  const defs = Object.entries(values).map(([k, v]) => `-D${k}=${v}`);
  return [SANDBOX_EXEC, "-p", profile, ...defs, "--", ...command];
}
