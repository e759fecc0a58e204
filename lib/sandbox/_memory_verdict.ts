/**
 * How a command killed at penguin's memory bound (`_memory_cgroup.ts`) is
 * told: its exit status carries the bound it reached.
 *
 * @module
 */
import { memoryCgroup, memoryKillsNow } from "./_memory_cgroup.ts";
import type { ExitStatus, SandboxedProcess } from "./_process.ts";

/**
 * `child` whose exit status tells, when the command was killed (SIGKILL)
 * after the kernel's out-of-memory killer acted in this process's cgroup
 * (more kills than the `since` seen when it started), the bound it reached
 * ({@linkcode ExitStatus.memoryBound}). The count is read only then.
 */
export function withMemoryVerdict(child: SandboxedProcess, since: number): SandboxedProcess {
  const status = child.status.then(async (s): Promise<ExitStatus> => {
    const made = memoryCgroup();
    if (s.signal !== "SIGKILL" || made === undefined) return s;
    const kills = await memoryKillsNow();
    if (kills === undefined || kills <= since) return s;
    return { ...s, memoryBound: made.pinned ?? made.bound };
  });
  return {
    pid: child.pid,
    sandbox: child.sandbox,
    output: child.output,
    outputClosed: child.outputClosed,
    status,
    write: (chars) => child.write(chars),
    closeStdin: () => child.closeStdin(),
    signal: (sig) => child.signal(sig),
    kill: async (graceMs) => {
      await child.kill(graceMs);
      return await status;
    },
    [Symbol.asyncDispose]: async () => {
      await child.kill();
      await status.catch(() => {});
    },
  };
}
