/**
 * How much of the machine's CPU went to work other than this process and the
 * children it reaped, over an interval (Linux /proc; undefined elsewhere): a
 * benchmark figure taken while the machine was busy with other work says so.
 *
 * @module
 */

/** CPU ticks since boot: the machine's busy and total, and this process's own (reaped children included). */
export interface CpuTicks {
  busy: number;
  total: number;
  own: number;
}

/** The counters now, or undefined without /proc. */
export function cpuTicks(): CpuTicks | undefined {
  try {
    // cpu user nice system idle iowait irq softirq steal (guest time is within user).
    const cpu = Deno.readTextFileSync("/proc/stat").split("\n")[0]!.trim().split(/\s+/)
      .slice(1, 9).map(Number);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = cpu as [
      number,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    const self = Deno.readTextFileSync("/proc/self/stat");
    // After "pid (comm) ": state is field 3, utime..cstime are fields 14-17.
    const f = self.slice(self.lastIndexOf(")") + 2).split(" ").map(Number);
    return {
      busy: user + nice + system + irq + softirq + steal,
      total: user + nice + system + idle + iowait + irq + softirq + steal,
      own: f[11]! + f[12]! + f[13]! + f[14]!,
    };
  } catch {
    return undefined;
  }
}

/** Percent of all the machine's CPU time between `a` and `b` that was busy with other work. */
export function otherWork(a: CpuTicks | undefined, b: CpuTicks | undefined): number | undefined {
  if (!a || !b || b.total <= a.total) return undefined;
  const other = (b.busy - a.busy) - (b.own - a.own);
  return Math.max(0, (100 * other) / (b.total - a.total));
}
