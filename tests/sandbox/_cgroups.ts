/** Whether this machine lets penguin make a pids cgroup (root, a pids hierarchy). */
export function cgroupsHere(): boolean {
  if (Deno.build.os !== "linux" || Deno.uid() !== 0) return false;
  try {
    Deno.statSync("/sys/fs/cgroup/pids/cgroup.procs");
    return true;
  } catch {
    try {
      return /\bpids\b/.test(Deno.readTextFileSync("/sys/fs/cgroup/cgroup.subtree_control"));
    } catch {
      return false;
    }
  }
}

/** Whether this machine lets penguin make a memory cgroup (root, a cgroup v1 memory hierarchy). */
export function memoryCgroupsHere(): boolean {
  if (Deno.build.os !== "linux" || Deno.uid() !== 0) return false;
  try {
    Deno.statSync("/sys/fs/cgroup/memory/memory.limit_in_bytes");
    return true;
  } catch {
    return false;
  }
}
