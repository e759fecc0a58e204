/**
 * What `penguin sandbox check` says of the kernel's bounds on penguin's
 * commands: the pids cgroup (`_pids_cgroup.ts`) and the memory cgroup
 * (`_memory_cgroup.ts`). The check makes them as a command would (each is
 * removed when the process exits): whether they can be made is the answer.
 *
 * @module
 */
import type { SandboxCheck, SandboxReport } from "./detect.ts";
import { ceilingFor, ensureCgroup } from "./_pids_cgroup.ts";
import { ensureMemoryCgroup } from "./_memory_cgroup.ts";
import { formatSize } from "../protocol/format_size.ts";

/**
 * `report` with its "process limit" check told from the pids cgroup (as root,
 * where one can be made) and a "memory bound" check; unchanged when the
 * sandbox is not bubblewrap's.
 */
export async function withCgroupChecks(report: SandboxReport): Promise<SandboxReport> {
  if (!report.usable || report.kind !== "bwrap") return report;
  const [pids, memory] = await Promise.all([
    Deno.uid() === 0 ? ensureCgroup(ceilingFor(0, false)) : Promise.resolve(undefined),
    ensureMemoryCgroup(),
  ]);
  const checks = report.checks.map((c): SandboxCheck =>
    c.name === "process limit" && pids !== undefined
      ? {
        name: "process limit",
        status: "ok",
        detail: "pids cgroup: the kernel refuses a fork past the running commands' limits " +
          "(2048 each by default) plus 512",
      }
      : c
  );
  checks.push(
    memory !== undefined
      ? {
        name: "memory bound",
        status: "ok",
        detail: `${formatSize(memory.bound)} for all penguin commands of the machine together, ` +
          `${formatSize(memory.own)} for this penguin's (memory cgroup ${
            memory.dir.replace(/\/[^/]+$/, "")
          })`,
      }
      : {
        name: "memory bound",
        status: "warn",
        detail: "none beyond the sizes of /tmp and /dev/shm: memory held in System V IPC, " +
          "memfds or many background commands is not bounded (needs root and a cgroup v1 " +
          "memory hierarchy)",
        fix: "run penguin as root on a cgroup v1 memory hierarchy, or limit the memory of the " +
          "cgroup penguin runs in",
      },
  );
  return { ...report, checks };
}
