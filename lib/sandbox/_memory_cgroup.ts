/**
 * A kernel-enforced bound on the memory all penguin commands of the machine
 * hold together, where penguin may make a memory cgroup (root, a cgroup v1
 * `memory` hierarchy).
 *
 * Memory a command holds outside any process's share — the pages of its
 * tmpfs `/tmp` and `/dev/shm`, the kernel memory of many files or extended
 * attributes there, System V shared memory and message queues of its IPC
 * namespace, a `memfd` nobody maps, each background command's own `/tmp` —
 * is never what the out-of-memory killer picks: filled, the host's own
 * processes were killed instead (attack rounds 26 and 27). A memory cgroup
 * counts all of it (shmem pages, and the kernel's own allocations for the
 * cgroup's processes) against one limit, and when the limit is reached the
 * kernel reclaims or kills inside the cgroup only.
 *
 * The layout: `penguin` at the root of the memory hierarchy penguin sees (a
 * container's own, in a container), made by the first penguin that needs it
 * with `memory.limit_in_bytes` set to {@linkcode BOUND_NUMERATOR}/
 * {@linkcode BOUND_DENOMINATOR} of the machine's memory (or of that root's
 * limit), and under it one `penguin-<pid>-<random>` per penguin process,
 * which that process's sandboxes join (`JOIN_CGROUP` in `_pids_cgroup.ts`,
 * from `__PMCG`). Every penguin process of the machine shares the one bound:
 * however many sessions run, the host keeps the rest. (Made under the cgroup
 * each penguin ran in, two penguins started from two login scopes or CI jobs
 * each had three quarters, and together they had the host's processes
 * killed: attack round 29 i04.) Each process's own cgroup is limited to
 * 1/{@linkcode OWN_DENOMINATOR} of the bound; within a limited cgroup (a CI
 * job), the penguins started there share a level `job-<its path>` held to
 * three quarters of its limit (each alone at three quarters, two penguins of
 * one job held more than the job's limit: attack round 30 p02), so neither
 * one session nor a job's commands moved out of its cgroup take the rest. An existing `penguin`
 * cgroup's limit is left as it is (an administrator may have set it).
 *
 * Deno's permission set refuses penguin every `/sys` access, so a short bash
 * makes the cgroups (removing, on the way, the empty ones of penguin
 * processes that are gone), and another removes this process's own when it
 * exits. Where none can be made (not root, cgroup v2, no memory controller),
 * only the tmpfs sizes bound what a command holds (`docs/security.md`).
 *
 * @module
 */
import { findBash } from "./_executables.ts";
import { runFactScript } from "./_fact_script.ts";
import { removeCgroupAtExit } from "./_cgroup_exit.ts";

/** The share of the memory penguin's cgroup may use that all penguin commands may hold. */
export const BOUND_NUMERATOR = 3;
/** See {@linkcode BOUND_NUMERATOR}. */
export const BOUND_DENOMINATOR = 4;

/**
 * One penguin process's commands may hold at most this part (1/n) of the shared bound: memory a
 * command holds in a tmpfs or shared memory belongs to no process, so the kernel never kills the
 * session holding it, and one session's full `/tmp`s had every other session's commands killed
 * (attack round 29 i07).
 */
export const OWN_DENOMINATOR = 2;

/**
 * bash: `$1` a limit for this process's own cgroup (tests), or empty. Makes
 * `penguin` at the root of the memory hierarchy this shell (like penguin)
 * sees, with its bound, if it is missing; removes the empty cgroups of
 * penguin processes that are gone; makes `penguin-<penguin's pid>-<random>`
 * with this process's own limit ({@linkcode OWN_DENOMINATOR}, and the bound
 * of the cgroup penguin runs in); and prints `dir <path>`, `bound <the shared
 * limit>` and `own <this process's limit>`, in bytes.
 */
const MAKE = `pin=$1 own= top=/sys/fs/cgroup/memory tot=
[ -e "$top/cgroup.procs" ] && [ -e "$top/memory.limit_in_bytes" ] || exit 0
while IFS=: read -r _ ctl path; do
  [ "$ctl" = memory ] && own=\${path%/}
done </proc/self/cgroup
mine=$top
[ -n "$own" ] && [ -d "$top$own" ] && mine=$top$own
while read -r k v _; do
  [ "$k" = MemTotal: ] && tot=$((v * 1024))
done </proc/meminfo
[ -n "$tot" ] || exit 0
limit() {
  local k v l=$tot
  while read -r k v _; do
    [ "$k" = hierarchical_memory_limit ] && [ "$v" -lt "$l" ] 2>/dev/null && l=$v
  done <"$1/memory.stat"
  echo "$l"
}
p=$top/penguin
if mkdir "$p" 2>/dev/null; then
  # Older kernels count a child in its parent only with use_hierarchy (always on since 6.1).
  echo 1 2>/dev/null >"$p/memory.use_hierarchy"
  b=$(limit "$top")
  if ! echo "$((b / ${BOUND_DENOMINATOR} * ${BOUND_NUMERATOR}))" 2>/dev/null >"$p/memory.limit_in_bytes"; then
    rmdir "$p"
    exit 0
  fi
fi
[ -d "$p" ] || exit 0
for d in "$p"/penguin-*-* "$p"/job-*/penguin-*-*; do
  [ -d "$d" ] || continue
  q=\${d##*/penguin-}; q=\${q%%-*}
  [ -d "/proc/$q" ] || rmdir "$d" 2>/dev/null
done
read -r b <"$p/memory.limit_in_bytes"
m=$((b / ${OWN_DENOMINATOR}))
[ -n "$pin" ] && m=$pin
# Within a limited cgroup (a CI job, a login scope with a bound), the penguins started there share
# a level of their own, held to three quarters of its limit.
parent=$p job=
l=$(limit "$mine")
if [ "$l" -lt "$tot" ] && [ "$mine" != "$top" ]; then
  job=$p/job-\${own//[^A-Za-z0-9]/_}
  if mkdir "$job" 2>/dev/null; then
    echo 1 2>/dev/null >"$job/memory.use_hierarchy"
    if ! echo "$((l / ${BOUND_DENOMINATOR} * ${BOUND_NUMERATOR}))" 2>/dev/null >"$job/memory.limit_in_bytes"; then
      rmdir "$job"
      exit 0
    fi
  fi
  [ -d "$job" ] || exit 0
  parent=$job
  read -r jl <"$job/memory.limit_in_bytes"
  [ -z "$pin" ] && [ "$jl" -lt "$m" ] && m=$jl
fi
d=$parent/penguin-$PPID-$RANDOM$RANDOM
mkdir "$d" 2>/dev/null || exit 0
if ! echo "$m" 2>/dev/null >"$d/memory.limit_in_bytes"; then
  rmdir "$d"
  exit 0
fi
echo "dir $d"
echo "bound $b"
echo "own $m"
[ -z "$job" ] || echo "job $job"`;

const state: {
  tried?: Promise<MemoryCgroup | undefined>;
  made?: MemoryCgroup | undefined;
  pinned?: number | undefined;
  /** The cgroup's count of processes the kernel's out-of-memory killer took, as last read. */
  kills: number;
} = { kills: 0 };

/** This process's memory cgroup and the bound it shares with every penguin process. */
export interface MemoryCgroup {
  /** Its directory (`…/penguin/penguin-<pid>-<random>`). */
  dir: string;
  /** The limit of the shared `penguin` cgroup, in bytes. */
  bound: number;
  /** This process's own limit (its commands' together), in bytes. */
  own: number;
  /** This process's own limit, when tests pinned one. */
  pinned?: number;
}

/** Give this process's own cgroup the limit `bytes` (tests only; before its first command). */
export function _pinMemoryLimit(bytes: number): void {
  state.pinned = bytes;
}

/**
 * Make this process's memory cgroup (once; later calls return the first
 * answer). Undefined where none can be made.
 */
export function ensureMemoryCgroup(): Promise<MemoryCgroup | undefined> {
  state.tried ??= make();
  return state.tried;
}

/** This process's memory cgroup, once made; undefined before, or where there is none. */
export function memoryCgroup(): MemoryCgroup | undefined {
  return state.made;
}

async function make(): Promise<MemoryCgroup | undefined> {
  if (Deno.build.os !== "linux" || Deno.uid() !== 0) return undefined;
  const bash = await findBash();
  if (bash === undefined) return undefined;
  let facts: Map<string, string>;
  try {
    const pin = state.pinned === undefined ? "" : String(state.pinned);
    facts = (await runFactScript(bash, ["-c", MAKE, "penguin-memory", pin])).facts;
  } catch {
    return undefined;
  }
  const dir = facts.get("dir");
  const bound = Number(facts.get("bound"));
  const own = Number(facts.get("own"));
  if (dir === undefined || !Number.isSafeInteger(bound) || !Number.isSafeInteger(own)) {
    return undefined;
  }
  state.made = { dir, bound, own, ...(state.pinned === undefined ? {} : { pinned: state.pinned }) };
  // A job's level goes with its last penguin (one of another penguin still in it stays).
  removeCgroupAtExit(bash, dir, facts.get("job"));
  return state.made;
}

/**
 * The environment entry that makes a sandbox's launcher join the memory
 * cgroup (`__PMCG`: the path of its `cgroup.procs`), or none where there is none.
 */
export function memoryJoinEnv(): Record<string, string> {
  return state.made === undefined ? {} : { __PMCG: `${state.made.dir}/cgroup.procs` };
}

/** bash: `$1` the cgroup; prints `kills <the out-of-memory killer's count there>`. */
const KILLS = `while read -r k v; do
  [ "$k" = oom_kill ] && echo "kills $v"
done <"$1/memory.oom_control"`;

/** The out-of-memory kills this process has seen in its cgroup so far (a command's `since`). */
export function memoryKillsSeen(): number {
  return state.kills;
}

/**
 * The out-of-memory killer's count in this process's cgroup, read now (and
 * remembered as seen); undefined where there is no cgroup or it cannot be read.
 */
export async function memoryKillsNow(): Promise<number | undefined> {
  const dir = state.made?.dir;
  if (dir === undefined) return undefined;
  const bash = await findBash().catch(() => undefined);
  if (bash === undefined) return undefined;
  try {
    const kills = Number((await runFactScript(bash, ["-c", KILLS, "penguin-memory", dir])).facts
      .get("kills"));
    if (!Number.isSafeInteger(kills)) return undefined;
    state.kills = Math.max(state.kills, kills);
    return kills;
  } catch {
    return undefined;
  }
}
