/**
 * The process budget of the user's penguin processes: the processes
 * (threads) that all their sandboxed commands running at once may hold
 * together, whichever penguin process started them.
 *
 * Each sandbox's init holds its command to the policy's `maxProcesses`
 * (`_proc_guard.ts`), but every command running at once has a sandbox of
 * its own (a session keeps up to 64 background commands), so the limits
 * add up: 16 commands of 2047 processes reach a common `kernel.pid_max`
 * (32768) and the whole machine then fails to fork; and several penguin
 * processes of the user (sessions, runs) each run commands too. The budget
 * is half of the PIDs free to them: the smaller of `kernel.pid_max` and
 * `kernel.threads-max`, less the threads the machine runs
 * (`/proc/loadavg`) that penguin's commands do not hold, halved. What
 * penguin's commands hold comes from the ledger (`_budget_ledger.ts`), which
 * every penguin process of the user writes and reads: the threads of other
 * penguins' commands do not shrink it. Read when this process's first
 * command starts, and again before one is refused.
 *
 * A command takes a share of it for its life ({@linkcode takeShare}),
 * under the ledger's lock, of what neither this process's commands nor the
 * other penguin processes' hold: its policy's limit while that fits, leaving room for
 * {@linkcode RESERVED_SHARES} more commands of {@linkcode MIN_SHARE};
 * past that, a smaller limit, never below {@linkcode MIN_SHARE} (a
 * command that cannot have even that is refused, with an error saying how
 * many commands run and hold how much). The share comes back when the
 * command's status is reported, and when it fails to start. Where the
 * ledger cannot be kept (no private run directory), the budget is this
 * process's alone.
 *
 * Where `/proc` does not say (macOS), there is no budget: every command
 * gets its policy's limit.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";
import { hostFacts } from "./_proc_facts.ts";
import { type LedgerLock, lockLedger, lowerOwn } from "./_budget_ledger.ts";
import { ceilingFor, setCeiling } from "./_pids_cgroup.ts";
import { ensureMemoryCgroup } from "./_memory_cgroup.ts";

/**
 * The most the budget ever is, whatever the machine says: half of the usual `kernel.pid_max`
 * (32768). Inside a PID namespace (a container) `/proc` may show the namespace's own ceiling
 * (up to 4194304), not the host's, whose PIDs every process there takes too (attack round 17
 * bounded L8: a budget of 96,369 against a host pid_max of 32768).
 */
export const MAX_BUDGET = 16384;

/** The smallest limit a command is given; one that cannot have it is refused. */
export const MIN_SHARE = 64;
/** Commands of {@linkcode MIN_SHARE} the budget keeps room for before any gets less than its policy's limit. */
export const RESERVED_SHARES = 64;

/** A command's part of the budget. */
export interface Share {
  /** The process limit the command runs with. */
  readonly limit: number;
  /** Give the share back (again: nothing). */
  release(): void;
}

/** The machine's PID ceiling and threads, as read (null: `/proc` does not say). */
export interface Machine {
  ceiling: number;
  threads: number;
  /** The tightest `pids.max` above penguin and its `pids.current` then, where one is set. */
  cgroup?: { max: number; current: number };
}

/**
 * The budget once read (null: none here), the limit each running command
 * holds, what the other penguin processes held at the last share taken, and
 * how the ledger is kept: `pinned` (tests) forces the total; `ledger` is
 * then the one ledger directory, or none (this process's budget alone).
 */
const state: {
  total?: number | null | undefined;
  held: Map<number, number>;
  others: number;
  pinned: boolean;
  ledger?: string | undefined;
  cap?: number | undefined;
} = { held: new Map(), others: 0, pinned: false };
let nextId = 0;

/**
 * Force the budget's total (tests only); undefined reads it from the
 * machine again at the next command. Shares already taken stay taken. A
 * forced budget is this process's alone, unless `ledgerDir` names the one
 * ledger directory it shares with the processes given the same one.
 */
export function _pinBudget(total: number | undefined, ledgerDir?: string): void {
  state.total = total;
  state.pinned = total !== undefined;
  state.ledger = total !== undefined ? ledgerDir : undefined;
  state.cap = undefined;
}

/** What the running commands hold (tests). */
export function budgetFacts(): { total: number | undefined; held: number; commands: number } {
  return {
    total: state.total ?? undefined,
    held: heldNow(),
    commands: state.held.size,
  };
}

/** What the other penguin processes held when this one last took a share (tests). */
export function othersFacts(): number {
  return state.others;
}

/** Wait until every change of this process's ledger entry so far is written (tests). */
export function _ledgerWritten(): Promise<void> {
  return queue.then(() => {});
}

function heldNow(): number {
  let n = 0;
  for (const limit of state.held.values()) n += limit;
  return n;
}

/** In-process queue: one share taken or given back at a time, in order. */
let queue: Promise<unknown> = Promise.resolve();

function serialized<T>(fn: () => Promise<T>): Promise<T> {
  const next = queue.then(fn, fn);
  queue = next.catch(() => {});
  return next;
}

/**
 * The machine's PID ceiling and threads, or null where `/proc` does not
 * say. Read through bash (`_proc_facts.ts`): Deno refuses every `/proc`
 * read under penguin's own permissions.
 */
async function readMachine(): Promise<Machine | null> {
  const { pidMax, threadsMax, threads, pidsCgroup } = await hostFacts();
  if (pidMax === undefined && threadsMax === undefined) return null;
  return {
    ceiling: Math.min(pidMax ?? Infinity, threadsMax ?? Infinity),
    threads: threads ?? 0,
    ...(pidsCgroup ? { cgroup: pidsCgroup } : {}),
  };
}

/**
 * Half the PIDs free to penguin's commands: the threads running, less those
 * penguin's commands may hold (`held`, they run within it), are not free.
 */
export function budgetOf(machine: Machine, held: number): number {
  const half = Math.floor((machine.ceiling - Math.max(0, machine.threads - held)) / 2);
  return Math.max(0, Math.min(MAX_BUDGET, half));
}

/**
 * The most one penguin process's commands may hold under an administrator's `pids.max` above
 * it (a CI job's, systemd's `TasksMax`): half of what the limit leaves them (`held`, this
 * process's shares, run within it), never below two commands' worth (in a small container the
 * kernel holds them to the limit, as before); undefined where no limit is set. Per process, not
 * of the shared budget: the ledger's other penguins may run outside that cgroup. One session's
 * commands took a job's whole limit and the user's next penguin could not start (attack round 30
 * p03).
 */
export function cgroupCapOf(machine: Machine, held: number): number | undefined {
  if (!machine.cgroup) return undefined;
  const { max, current } = machine.cgroup;
  return Math.max(Math.floor((max - Math.max(0, current - held)) / 2), 2 * MIN_SHARE);
}

/**
 * The part of a shared budget one penguin process never takes, kept for the user's other ones
 * (a quarter of the budget, at most {@linkcode OTHERS_RESERVE}): without it one session's model
 * (8 subagents of 64 background commands each) held the whole budget, and every other penguin of
 * the user was refused every command (attack round 18, bounded #2).
 */
export const OTHERS_RESERVE = 16 * 64;

/**
 * The most this process's commands may hold in all of a budget of `total`, and under the cap of
 * its cgroup's `pids.max`.
 */
function ownCeiling(total: number): number {
  const shared = !state.pinned || state.ledger !== undefined;
  const own = shared ? total - Math.min(OTHERS_RESERVE, Math.floor(total / 4)) : total;
  return Math.min(own, state.cap ?? Infinity);
}

/** The limit a command wanting `wanted` gets, or undefined when none fits. */
function grantOf(wanted: number, total: number, others: number): number | undefined {
  const left = Math.min(total - others, ownCeiling(total)) - heldNow();
  const bound = Math.min(total, state.cap ?? Infinity);
  const reserve = Math.min(MIN_SHARE * RESERVED_SHARES, Math.floor(bound / 2));
  const floor = Math.min(wanted, MIN_SHARE);
  const limit = Math.min(wanted, Math.max(left - reserve, floor));
  return limit > left ? undefined : limit;
}

/** The ledger under its lock, or none: a forced budget without one, or no run directory. */
async function openLedger(): Promise<LedgerLock | undefined> {
  if (state.pinned && state.ledger === undefined) return undefined;
  try {
    return await lockLedger(state.ledger);
  } catch {
    return undefined; // no private run directory: this process's budget alone
  }
}

/**
 * Take the share of a command whose policy allows `wanted` processes
 * (none when `wanted` is not positive: no limit, no share). Throws a
 * runtime {@linkcode PenguinError} about `what` when the budget left is
 * below {@linkcode MIN_SHARE} (or `wanted`, if smaller).
 */
export async function takeShare(wanted: number, what: string): Promise<Share> {
  const share = wanted <= 0
    ? { limit: wanted, release: () => {} }
    : await serialized(() => take(wanted, what));
  // The kernel's ceiling on this process's sandboxes (`_pids_cgroup.ts`): raised, if this share
  // needs it, before the command starts; lowered once it ended. The memory cgroup
  // (`_memory_cgroup.ts`) is made with the first share, beside it.
  if (wanted <= 0) unlimited++;
  await Promise.all([
    setCeiling(ceilingNow()).catch(() => {}),
    ensureMemoryCgroup().catch(() => undefined),
  ]);
  let ended = false;
  return {
    limit: share.limit,
    release: () => {
      if (ended) return;
      ended = true;
      share.release();
      if (wanted <= 0) unlimited--;
      void setCeiling(ceilingNow()).catch(() => {});
    },
  };
}

/** Commands running without a limit (`maxProcesses` 0). */
let unlimited = 0;

/** The cgroup ceiling for what the running commands hold now. */
function ceilingNow(): string {
  return ceilingFor(heldNow(), unlimited > 0);
}

async function take(wanted: number, what: string): Promise<Share> {
  let machine: Machine | null | undefined;
  if (state.total === undefined) {
    machine = await readMachine();
    if (machine === null) state.total = null;
  }
  if (state.total === null) return { limit: wanted, release: () => {} };
  const ledger = await openLedger();
  try {
    const others = (await ledger?.othersHeld()) ?? 0;
    state.others = others;
    if (machine) readInto(machine, others);
    let limit = grantOf(wanted, state.total!, others);
    if (limit === undefined && !state.pinned && !machine) {
      // Read again before refusing: the machine may run fewer threads now.
      machine = await readMachine();
      if (machine) readInto(machine, others);
      limit = grantOf(wanted, state.total!, others);
    }
    if (limit === undefined) throw refusal(what, wanted, state.total!, others);
    const id = nextId++;
    state.held.set(id, limit);
    await ledger?.write(heldNow()).catch(() => {});
    return { limit, release: () => release(id) };
  } finally {
    ledger?.close();
  }
}

/** The budget and the cgroup cap from what the machine says now. */
function readInto(machine: Machine, others: number): void {
  state.total = budgetOf(machine, others + heldNow());
  state.cap = cgroupCapOf(machine, heldNow());
}

/** Give a share back: this process's ledger entry is lowered in turn. */
function release(id: number): void {
  if (!state.held.delete(id)) return;
  if (state.pinned && state.ledger === undefined) return;
  const ledger = state.ledger;
  serialized(() => lowerOwn(heldNow(), ledger).catch(() => {}));
}

function refusal(what: string, wanted: number, total: number, others: number): PenguinError {
  const n = state.held.size;
  const floor = Math.min(wanted, MIN_SHARE);
  const elsewhere = others > 0
    ? `, the commands of the user's other penguin processes may hold ${others} more,`
    : "";
  const own = ownCeiling(total);
  const ownPart = heldNow() + floor > own
    ? `, of which one penguin process may hold ${own} (the rest is kept for the user's other ones` +
      `${state.cap === own ? " and other processes under its cgroup's pids.max" : ""})`
    : "";
  return new PenguinError(
    "runtime",
    `Cannot run ${what}: ${n} command${n === 1 ? " is" : "s are"} running with ${heldNow()} ` +
      `processes allowed in all${elsewhere} and penguin's commands may hold ${total} at once ` +
      `(half the machine's free PIDs)${ownPart}, too few left for ${floor} more; ` +
      `wait for one to end or kill one`,
  );
}
