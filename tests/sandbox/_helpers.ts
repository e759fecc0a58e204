// Shared helpers for the sandbox tests.
import { join } from "node:path";
import {
  createPolicy,
  type SandboxedProcess,
  type SandboxPolicy,
  spawnSandboxed,
} from "../../lib/sandbox/mod.ts";
import { withWorkspace } from "../support/roots.ts";

export { visibleTempDir } from "../support/roots.ts";
export { pidsWithArg } from "../tools/_process_probes.ts";

/** The checks sandbox detection reports, in order. */
export const SANDBOX_CHECKS: readonly string[] = [
  "bubblewrap",
  "user namespaces",
  "sandbox start",
  "confinement",
  "network isolation",
  "system call filter",
];

/**
 * Run `fn` with a visible temp workspace and a sandbox policy confining to
 * it; HOME is the (empty) workspace, so login shells read no personal
 * profile.
 */
export function withPolicyWorkspace(
  fn: (policy: SandboxPolicy, ws: string) => Promise<void>,
): Promise<void> {
  return withWorkspace((ws) =>
    fn(
      createPolicy({
        workspace: ws,
        home: "",
        hostEnv: { PATH: Deno.env.get("PATH") ?? "", HOME: ws },
      }),
      ws,
    )
  );
}

/**
 * How long {@linkcode collect} waits for a command to end before it kills it
 * and fails: far beyond what any test's command takes, so it fires only on a
 * command that would never end (a signal lost on its way), which would
 * otherwise hang the whole suite with nothing said.
 */
export const COLLECT_LIMIT_MS = 120_000;

/**
 * Read all output and the status. A command still running after
 * `limitMs` ({@linkcode COLLECT_LIMIT_MS}) is killed, and `collect` throws
 * with the output it had read.
 */
export async function collect(
  child: SandboxedProcess,
  limitMs = COLLECT_LIMIT_MS,
): Promise<{ out: string; code: number; signal: string | null }> {
  let out = "";
  let hung = false;
  const watchdog = setTimeout(() => {
    hung = true;
    void child.kill(0);
  }, limitMs);
  try {
    for await (const chunk of child.output) out += chunk;
    const { code, signal } = await child.status;
    if (hung) {
      throw new Error(
        `the command did not end within ${limitMs / 1000} s and was killed; ` +
          `its output: ${JSON.stringify(out.slice(-2000))}`,
      );
    }
    return { out, code, signal };
  } finally {
    clearTimeout(watchdog);
  }
}

/** Read output until it contains `marker` (bounded by the child's lifetime); returns what was read. */
export async function readUntil(child: SandboxedProcess, marker: string): Promise<string> {
  let out = "";
  const reader = child.output.getReader();
  try {
    while (!out.includes(marker)) {
      const { value, done } = await reader.read();
      if (done) break;
      out += value;
    }
  } finally {
    reader.releaseLock();
  }
  return out;
}

/** True when `path` exists on the host. */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** True while `pid` exists and is not a zombie. */
export function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** Poll (bounded: at most `tries` × 50 ms) until `pred` holds; returns whether it did. */
export async function eventually(pred: () => boolean, tries = 200): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (pred()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return pred();
}

/** Write `text` at `path`, making its directories. */
export async function putFile(path: string, text: string): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, text);
}

/** What the sandboxed `shell` printed under `policy` (other data roots not hidden), once ended. */
export async function shellOutput(policy: SandboxPolicy, shell: string): Promise<string> {
  let out = "";
  const child = await spawnSandboxed({
    shell,
    policy: { ...policy, hideOtherDataRoots: false },
    onOutput: (chunk) => void (out += chunk),
  });
  await child.status;
  return out;
}
