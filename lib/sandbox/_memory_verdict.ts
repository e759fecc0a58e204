/**
 * How a command killed at penguin's memory bound (`_memory_cgroup.ts`) is
 * told: its exit status carries the bound it reached.
 *
 * @module
 */
import { memoryCgroup, memoryKillsNow } from "./_memory_cgroup.ts";
import { type ExitStatus, type SandboxedProcess, withStatus } from "./_process.ts";

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
    return { ...s, memoryBound: made.own };
  });
  return withStatus(child, status);
}
