/**
 * The removal of a cgroup penguin made for itself (`_pids_cgroup.ts`, `_memory_cgroup.ts`) when
 * the process exits: through a short bash, since Deno's permission set refuses penguin `/sys`.
 * One left behind (penguin killed, or its sandboxes not yet gone) is removed by the next penguin
 * that makes its own.
 *
 * @module
 */

/** Remove the empty cgroup `dir` (then `parent`, when empty) with `bash` when this process exits. */
export function removeCgroupAtExit(bash: string, dir: string, parent?: string): void {
  globalThis.addEventListener("unload", () => {
    try {
      new Deno.Command(bash, {
        args: [
          "-c",
          'rmdir "$1" 2>/dev/null; [ -z "$2" ] || rmdir "$2" 2>/dev/null; true',
          "penguin-cgroup",
          dir,
          parent ?? "",
        ],
        clearEnv: true,
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).outputSync();
    } catch {
      // Left empty: the next penguin to make its cgroup removes it.
    }
  });
}
