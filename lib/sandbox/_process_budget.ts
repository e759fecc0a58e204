/**
 * The process budget of this penguin process: the processes (threads)
 * that all its sandboxed commands running at once may hold together.
 *
 * Each sandbox's init holds its command to the policy's `maxProcesses`
 * (`_proc_guard.ts`), but every command running at once has a sandbox of
 * its own (a session keeps up to 64 background commands), so the limits
 * add up: 16 commands of 2047 processes reach a common `kernel.pid_max`
 * (32768) and the whole machine then fails to fork. The budget is half of
 * the PIDs free when the first command starts: the smaller of
 * `kernel.pid_max` and `kernel.threads-max`, less the threads the machine
 * runs then (`/proc/loadavg`), halved. Read once per process.
 *
 * A command takes a share of it for its life ({@linkcode takeShare}): its
 * policy's limit while that fits, leaving room for
 * {@linkcode RESERVED_SHARES} more commands of {@linkcode MIN_SHARE};
 * past that, a smaller limit, never below {@linkcode MIN_SHARE} (a
 * command that cannot have even that is refused, with an error saying how
 * many commands run and hold how much). The share comes back when the
 * command's status is reported, and when it fails to start.
 *
 * Where `/proc` does not say (macOS), there is no budget: every command
 * gets its policy's limit.
 *
 * @module
 */
import { PenguinError } from "../protocol/errors.ts";
import { hostFacts } from "./_proc_facts.ts";

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

/** The budget once read (null: none here), and the limit each running command holds. */
const state: { total?: number | null | undefined; held: Map<number, number> } = { held: new Map() };
let nextId = 0;

/**
 * Force the budget's total (tests only); undefined reads it from the
 * machine again at the next command. Shares already taken stay taken.
 */
export function _pinBudget(total: number | undefined): void {
  state.total = total;
}

/** What the running commands hold (tests). */
export function budgetFacts(): { total: number | undefined; held: number; commands: number } {
  return {
    total: state.total ?? undefined,
    held: heldNow(),
    commands: state.held.size,
  };
}

function heldNow(): number {
  let n = 0;
  for (const limit of state.held.values()) n += limit;
  return n;
}

/**
 * Half the PIDs free on this machine, or null where `/proc` does not say.
 * Read through bash (`_proc_facts.ts`): Deno refuses every `/proc` read
 * under penguin's own permissions.
 */
async function readBudget(): Promise<number | null> {
  const { pidMax, threadsMax, threads } = await hostFacts();
  if (pidMax === undefined && threadsMax === undefined) return null;
  const ceiling = Math.min(pidMax ?? Infinity, threadsMax ?? Infinity);
  return Math.max(0, Math.floor((ceiling - (threads ?? 0)) / 2));
}

/**
 * Take the share of a command whose policy allows `wanted` processes
 * (none when `wanted` is not positive: no limit, no share). Throws a
 * runtime {@linkcode PenguinError} about `what` when the budget left is
 * below {@linkcode MIN_SHARE} (or `wanted`, if smaller).
 */
export async function takeShare(wanted: number, what: string): Promise<Share> {
  if (wanted <= 0) return { limit: wanted, release: () => {} };
  if (state.total === undefined) state.total = await readBudget();
  const total = state.total;
  if (total === null) return { limit: wanted, release: () => {} };
  const held = heldNow();
  const left = total - held;
  const reserve = Math.min(MIN_SHARE * RESERVED_SHARES, Math.floor(total / 2));
  const floor = Math.min(wanted, MIN_SHARE);
  const limit = Math.min(wanted, Math.max(left - reserve, floor));
  if (limit > left) {
    const n = state.held.size;
    throw new PenguinError(
      "runtime",
      `Cannot run ${what}: ${n} command${n === 1 ? " is" : "s are"} running with ${held} ` +
        `processes allowed in all, and this penguin's commands may hold ${total} at once ` +
        `(half the machine's free PIDs), too few left for ${floor} more; ` +
        `wait for one to end or kill one`,
    );
  }
  const id = nextId++;
  state.held.set(id, limit);
  return {
    limit,
    release: () => {
      state.held.delete(id);
    },
  };
}
