/**
 * What `/proc` says about penguin's own process and about the machine.
 * Deno's permission set (anything short of `--allow-all`) refuses penguin
 * every `/proc` read (`/proc/<pid>/…`, `/proc/self/…`, also `/proc/sys/…`
 * and `/proc/loadavg`), so a short bash, which penguin may run, reads
 * them: for penguin's own process, its parent's entries (the bash is
 * penguin's child). Code that read them with Deno saw nothing under the
 * shipped permissions (only the tests' `-A` let it through).
 *
 * @module
 */
import { findBash } from "./_executables.ts";

/** Penguin's own process, as `/proc` shows it. */
export interface ProcFacts {
  /** Signal numbers penguin ignores (`SigIgn` of `/proc/<pid>/status`). */
  ignored?: Set<number>;
  /**
   * The `*_API_KEY` variables penguin was started with (`/proc/<pid>/environ`):
   * its permission set lets it read only the variables `deno.json` names, and
   * names only by prefix (`Deno.env.toObject()` leaves every other one out).
   */
  apiKeys: Record<string, string>;
}

// Records end in NUL (a variable's value may hold newlines).
const SELF = `p=$PPID
while read -r k v; do [ "$k" = SigIgn: ] && printf 'sigign %s\\0' "$v"; done 2>/dev/null <"/proc/$p/status"
while IFS= read -r -d '' kv; do
  case "\${kv%%=*}" in *_API_KEY) printf 'key %s\\0' "$kv" ;; esac
done 2>/dev/null <"/proc/$p/environ"
true`;

async function bash(script: string, args: string[] = []): Promise<string | undefined> {
  if (Deno.build.os !== "linux") return undefined;
  const path = await findBash();
  if (path === undefined) return undefined;
  try {
    const out = await new Deno.Command(path, {
      args: ["--noprofile", "--norc", "-c", script, "penguin-proc", ...args],
      clearEnv: true,
      env: { PATH: "/usr/bin:/bin" },
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    return out.success ? new TextDecoder().decode(out.stdout) : undefined;
  } catch {
    return undefined;
  }
}

/** What `/proc` says about the machine (each fact absent where it could not be read). */
export interface HostFacts {
  /** `kernel.pid_max`. */
  pidMax?: number;
  /** `kernel.threads-max`. */
  threadsMax?: number;
  /** The threads the machine runs (the total of `/proc/loadavg`'s 4th field). */
  threads?: number;
  /** `fs.suid_dumpable` as written (`0`, `1`, `2`). */
  suidDumpable?: string;
  /**
   * The tightest `pids.max` of the cgroups penguin runs in (its own and those above it), and
   * their `pids.current` then: an administrator's limit (a CI job's, systemd's `TasksMax`).
   */
  pidsCgroup?: { max: number; current: number };
}

const HOST = `for f in pid_max:/proc/sys/kernel/pid_max threads_max:/proc/sys/kernel/threads-max \\
  suid_dumpable:/proc/sys/fs/suid_dumpable; do
  v=; read -r v 2>/dev/null <"\${f#*:}" && echo "\${f%%:*} $v"
done
l=; read -r l 2>/dev/null </proc/loadavg && set -- $l && echo "threads \${4#*/}"
own= top=
if [ -e /sys/fs/cgroup/pids/cgroup.procs ]; then
  top=/sys/fs/cgroup/pids
  while IFS=: read -r _ ctl path; do [ "$ctl" = pids ] && own=$path; done </proc/self/cgroup
elif [ -e /sys/fs/cgroup/cgroup.controllers ]; then
  top=/sys/fs/cgroup
  while IFS=: read -r h _ path; do [ "$h" = 0 ] && own=$path; done </proc/self/cgroup
fi
room= d=$top\${own%/}
while [ -n "$top" ] && [ "\${#d}" -gt "\${#top}" ]; do
  m=; c=
  read -r m 2>/dev/null <"$d/pids.max"; read -r c 2>/dev/null <"$d/pids.current"
  case $m$c in *[!0-9]*|'') ;; *) if [ -z "$room" ] || [ $((m - c)) -lt "\${room%% *}" ]; then room="$((m - c)) $m $c"; fi ;; esac
  d=\${d%/*}
done
[ -z "$room" ] || echo "pids_room $room"
true`;

const positive = (v: string | undefined): number | undefined => {
  const n = Number(v);
  return v !== undefined && /^\d+$/.test(v) && n > 0 ? n : undefined;
};

/** The machine's facts, read when asked (they change: `threads`). */
export async function hostFacts(): Promise<HostFacts> {
  const facts: HostFacts = {};
  for (const line of ((await bash(HOST)) ?? "").split("\n")) {
    const [key, value] = [line.slice(0, line.indexOf(" ")), line.slice(line.indexOf(" ") + 1)];
    const n = positive(value);
    if (key === "pid_max" && n !== undefined) facts.pidMax = n;
    else if (key === "threads_max" && n !== undefined) facts.threadsMax = n;
    else if (key === "threads" && n !== undefined) facts.threads = n;
    else if (key === "suid_dumpable" && /^[0-2]$/.test(value)) facts.suidDumpable = value;
    else if (key === "pids_room") {
      const [, max, current] = value.split(" ").map(Number);
      if (Number.isSafeInteger(max) && Number.isSafeInteger(current)) {
        facts.pidsCgroup = { max: max!, current: current! };
      }
    }
  }
  return facts;
}

/** The signal numbers of a `SigIgn` hex mask. */
export function signalsOfMask(hex: string): Set<number> | undefined {
  if (!/^[0-9a-fA-F]{1,16}$/.test(hex)) return undefined;
  const mask = BigInt(`0x${hex}`);
  const out = new Set<number>();
  for (let n = 1; n <= 64; n++) if ((mask >> BigInt(n - 1)) & 1n) out.add(n);
  return out;
}

let self: Promise<ProcFacts> | undefined;

/** Penguin's own process (read once; empty where there is no `/proc` or no bash). */
export function procFacts(): Promise<ProcFacts> {
  self ??= bash(SELF).then((text) => {
    const facts: ProcFacts = { apiKeys: {} };
    for (const record of (text ?? "").split("\0")) {
      const [key, value] = [
        record.slice(0, record.indexOf(" ")),
        record.slice(record.indexOf(" ") + 1),
      ];
      if (key === "sigign") {
        const set = signalsOfMask(value);
        if (set) facts.ignored = set;
      } else if (key === "key" && value.includes("=")) {
        facts.apiKeys[value.slice(0, value.indexOf("="))] = value.slice(value.indexOf("=") + 1);
      }
    }
    return facts;
  });
  return self;
}

/**
 * The start time (`/proc/<pid>/stat` field 22, clock ticks since boot) of
 * each of `pids` that runs, as written; pids that do not run are absent.
 * With `pids` empty, penguin's own (its key `0`). Undefined where `/proc`
 * could not be read at all (no bash, not Linux): then nothing is known.
 */
export async function startTimes(
  pids: readonly number[],
): Promise<Map<number, string> | undefined> {
  const out = await bash(STARTS, pids.length ? pids.map(String) : ["0"]);
  if (out === undefined || !out.startsWith("ok\n")) return undefined;
  const found = new Map<number, string>();
  for (const line of out.split("\n").slice(1)) {
    const m = /^(\d+) (\d+)$/.exec(line);
    if (m) found.set(Number(m[1]), m[2]!);
  }
  return found;
}

// Field 22 of stat is the 20th after the command name, which ends at the last ") ".
const STARTS = `[ -r /proc/self/stat ] || exit 1
echo ok
for p in "$@"; do
  f=$p; [ "$p" = 0 ] && f=$PPID
  l=; read -r l 2>/dev/null <"/proc/$f/stat" || continue
  set -- \${l##*) }; echo "$p \${20}"
done
true`;

let ownKey: Promise<string> | undefined;

/**
 * This process as `<pid>-<start time>`, unique across pid reuse: what names
 * the files a process keeps in the shared run directories, so that another
 * process can tell whether their owner still runs ({@linkcode startTimes}).
 */
export function ownProcessKey(): Promise<string> {
  ownKey ??= startTimes([]).then((m) => `${Deno.pid}-${m?.get(0) ?? "0"}`);
  return ownKey;
}

let instanceKey: Promise<string> | undefined;

/**
 * This isolate as `<pid>-<start time>-<8 hex>`: {@linkcode ownProcessKey}
 * and a random part, for what an isolate keeps and removes when it unloads.
 * Isolates of one process share its pid (Workers; test modules run with
 * `deno test --parallel`): named by the process alone, one isolate's exit
 * removed the files another still used (a login profile's copy gone before
 * the login shell started).
 */
export function ownInstanceKey(): Promise<string> {
  instanceKey ??= ownProcessKey().then((k) => `${k}-${crypto.randomUUID().slice(0, 8)}`);
  return instanceKey;
}

/** The pid and start time of a key {@linkcode ownInstanceKey} or {@linkcode ownProcessKey} made. */
export function parseInstanceKey(name: string): { pid: number; start: string } | undefined {
  const m = /^(\d{1,10})-(\d{1,20})(?:-[0-9a-f]{8})?$/.exec(name);
  return m ? { pid: Number(m[1]), start: m[2]! } : undefined;
}
