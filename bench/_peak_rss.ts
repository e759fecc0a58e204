/**
 * The peak resident set of a child process: `/proc/<pid>/status` VmHWM,
 * sampled until the process exits (Linux; 0 where /proc is missing).
 *
 * @module
 */

/** Wait for `child` to exit; its exit code and the highest VmHWM seen, in kB. */
export async function peakRss(child: Deno.ChildProcess): Promise<{ code: number; peakKb: number }> {
  let peakKb = 0;
  let done = false;
  const status = child.status.finally(() => (done = true));
  while (!done) {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(await Deno.readTextFile(`/proc/${child.pid}/status`));
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch {
      // the process just exited
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { code: (await status).code, peakKb };
}
