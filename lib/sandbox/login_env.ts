/**
 * The shell snapshot: the environment of the user's login shell, captured
 * once per policy (one session's confinement) and replayed into every
 * command, so commands run as a plain `bash --noprofile --norc -c` instead
 * of `bash -lc` re-sourcing `~/.bash_profile` and `~/.bashrc` each time.
 *
 * The capture runs the login shell once, under the same sandbox and
 * environment a command gets, with stdin closed and a time limit
 * ({@linkcode LOGIN_TIMEOUT_MS}); what the profile prints (noise such as
 * `pyenv: cannot rehash`) is discarded, never shown to the model. After the
 * profile has run, the shell prints its exported variables between two
 * random markers; only what lies between them counts, so a profile cannot
 * forge the snapshot by printing text of its own.
 *
 * The startup files of a hidden home are shown to this shell only
 * (`showStartupFiles`), never to commands. What is replayed: exported
 * variables only, and of those only configuration names (`PATH`, `LANG`,
 * `*_HOME`…, the allowlist of `env.ts`) whose values hold no credential, unless
 * the policy passes the name; never provider keys, `LD_*`, or what makes bash
 * run code at startup such as `BASH_ENV`; the vault and penguin's
 * forced values still win over them. Functions and aliases are not replayed (a
 * non-interactive `bash -c` expands no aliases anyway). When the profile
 * fails, hangs past the limit or prints no snapshot, commands run with the
 * plain environment.
 *
 * @module
 */
import { detectSandbox } from "./detect.ts";
import { spawnSandboxed } from "./spawn.ts";
import type { SandboxPolicy } from "./policy.ts";
import { noteLoginCapture } from "./_login_values.ts";

/** How long the login shell may take to start before the snapshot is given up (ms). */
export const LOGIN_TIMEOUT_MS = 10_000;

/** Variables bash sets for itself, and ones that make bash run code at startup: never replayed. */
const NOT_REPLAYED =
  /^(SHLVL|PWD|OLDPWD|_|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|BASH_FUNC_.*)$/;

/** `policy` with `login` as its shell snapshot (`env.login` of the policy). */
export function withLoginEnvironment(
  policy: SandboxPolicy,
  login: Record<string, string>,
): SandboxPolicy {
  return { ...policy, env: { ...policy.env, login } };
}

/**
 * The exported variables of `bash -l` run under `policy` (cached per policy
 * for the life of this process; concurrent callers share one capture).
 * Never throws: a failed capture yields `{}` and is tried again next time.
 * `opts.signal` ends this caller's wait (a session ending before its first
 * command): it yields `{}`. The shared capture is stopped only when no caller
 * is left waiting for it; then it is forgotten and tried again next time.
 */
export function loginEnvironment(
  policy: SandboxPolicy,
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<Record<string, string>> {
  if (opts.signal?.aborted) return Promise.resolve({});
  const key = JSON.stringify(policy);
  let capture = cache.get(key);
  if (capture === undefined) {
    const stop = new AbortController();
    const started: Capture = {
      env: captureLoginEnvironment(policy, opts.timeoutMs ?? LOGIN_TIMEOUT_MS, stop.signal),
      stop,
      waiters: 0,
      settled: false,
    };
    cache.set(key, started);
    // The file tools read what it exports (`$XDG_CONFIG_HOME`) from here.
    noteLoginCapture(policy.home, started.env);
    started.env.then((env) => {
      started.settled = true;
      if (env === undefined && cache.get(key) === started) cache.delete(key);
    });
    capture = started;
  }
  return waitFor(key, capture, opts.signal);
}

/** One capture under way or done, and how many callers still wait for it. */
interface Capture {
  env: Promise<Record<string, string> | undefined>;
  /** Stops the login shell; used when the last waiter gives up. */
  stop: AbortController;
  waiters: number;
  settled: boolean;
}

const cache = new Map<string, Capture>();

/** The result of `capture` for one caller, who stops waiting when `signal` fires. */
async function waitFor(
  key: string,
  capture: Capture,
  signal: AbortSignal | undefined,
): Promise<Record<string, string>> {
  if (capture.settled) return (await capture.env) ?? {};
  capture.waiters++;
  if (signal === undefined) {
    try {
      return (await capture.env) ?? {};
    } finally {
      capture.waiters--;
    }
  }
  let onAbort = () => {};
  const stopped = new Promise<"stopped">((resolve) => {
    onAbort = () => resolve("stopped");
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const first = await Promise.race([capture.env, stopped]);
    if (first !== "stopped") return first ?? {};
  } finally {
    signal.removeEventListener("abort", onAbort);
    capture.waiters--;
  }
  // Others still wait: the capture goes on for them. The last one stops the shell, and the next
  // caller starts a capture of its own instead of meeting this stopped one.
  if (capture.waiters > 0 || capture.settled) return {};
  if (cache.get(key) === capture) cache.delete(key);
  capture.stop.abort();
  await capture.env;
  return {};
}

/** Forget every snapshot (tests; a user who edited the profile starts a new session instead). */
export function clearLoginEnvironments(): void {
  cache.clear();
}

/** Exported variables between the markers `$1-begin` and `$1-end`, NUL-separated. */
const DUMP = `printf '%s\\0' "$1-begin"
for v in $(compgen -e); do printf '%s=%s\\0' "$v" "\${!v}"; done
printf '%s\\0' "$1-end"
exit 0
`;

/** `{}` for a profile that ran but gave no usable snapshot, `undefined` when nothing could run. */
async function captureLoginEnvironment(
  policy: SandboxPolicy,
  timeoutMs: number,
  stop?: AbortSignal,
): Promise<Record<string, string> | undefined> {
  const nonce = `penguin-snapshot-${crypto.randomUUID()}`;
  const timeout = AbortSignal.timeout(timeoutMs);
  if (stop?.aborted) return undefined;
  let out = "";
  try {
    const report = await detectSandbox(policy.bwrapPath ? { bwrapPath: policy.bwrapPath } : {});
    if (!report.bash) return undefined;
    const child = await spawnSandboxed({
      argv: [report.bash, "-l", "-c", DUMP, "penguin-snapshot", nonce],
      // Only this shell sees the startup files of a hidden home; commands do not.
      policy: { ...policy, showStartupFiles: true },
      stdin: "null",
      signal: stop ? AbortSignal.any([timeout, stop]) : timeout,
      killGraceMs: 200,
      onOutput: (chunk) => {
        out += chunk;
      },
    });
    await child.status;
    await child.outputClosed;
  } catch {
    // Given up while the sandbox started counts as a hung profile; anything else is tried again.
    return timeout.aborted && !stop?.aborted ? {} : undefined;
  }
  // Stopped by the caller, the shell was cut short: no verdict on the profile.
  if (stop?.aborted) return undefined;
  if (timeout.aborted) return {};
  return parseSnapshot(out, nonce);
}

/** The variables between the markers of `nonce` in `text` (the last complete pair), filtered. */
export function parseSnapshot(text: string, nonce: string): Record<string, string> {
  const end = text.lastIndexOf(`\0${nonce}-end\0`);
  if (end < 0) return {};
  const begin = text.lastIndexOf(`${nonce}-begin\0`, end);
  if (begin < 0) return {};
  const body = text.slice(begin + nonce.length + "-begin\0".length, end + 1);
  const env: Record<string, string> = {};
  for (const entry of body.split("\0")) {
    const eq = entry.indexOf("=");
    if (eq <= 0) continue;
    const name = entry.slice(0, eq);
    if (NOT_REPLAYED.test(name)) continue;
    env[name] = entry.slice(eq + 1);
  }
  return env;
}
