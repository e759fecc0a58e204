/**
 * How many sandboxed commands of one session start and run at once. Each
 * `exec_command` starts its own sandbox (bwrap, bash, the command), and a
 * model response may hold up to 256 calls: started together they are a fork
 * and memory storm. A session's calls take a slot before they start, in
 * order; the others wait, and a call aborted while it waits ends without
 * running. A foreground command holds its slot until it exits or its yield
 * window ends (then it runs on in the background, like one started there);
 * a background command holds it only while it starts.
 *
 * @module
 */

/** Sandboxed commands one session starts or runs at once. */
export const MAX_RUNNING_COMMANDS = 8;

/** Slots for commands; `enter` waits for one. */
export interface CommandGate {
  /**
   * Take a slot, waiting in order while all are held. Resolves the function
   * that gives it back (safe to call twice), or undefined when `signal`
   * aborted first (no slot is taken).
   */
  enter(signal: AbortSignal): Promise<(() => void) | undefined>;
  /** Slots held now. */
  readonly running: number;
}

/** A gate of `max` slots (at least one). */
export function createCommandGate(max: number = MAX_RUNNING_COMMANDS): CommandGate {
  const limit = Math.max(1, max);
  let running = 0;
  const waiting: (() => void)[] = [];
  const slot = () => {
    running++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      running--;
      // The slot passes to the first waiter, if any.
      const next = waiting.shift();
      if (next) next();
    };
  };
  return {
    get running() {
      return running;
    },
    enter(signal) {
      if (signal.aborted) return Promise.resolve(undefined);
      if (running < limit && waiting.length === 0) return Promise.resolve(slot());
      return new Promise((resolve) => {
        const turn = () => {
          signal.removeEventListener("abort", onAbort);
          resolve(slot());
        };
        const onAbort = () => {
          const at = waiting.indexOf(turn);
          if (at >= 0) waiting.splice(at, 1);
          resolve(undefined);
        };
        waiting.push(turn);
        signal.addEventListener("abort", onAbort, { once: true });
      });
    },
  };
}

/**
 * Sandboxed commands one penguin process starts or runs at once, across its
 * sessions: a session's subagents are sessions of their own, and twelve of
 * them ran about a hundred commands at once, their output streaming through
 * penguin (attack round 23 bounded B10: 574 MB).
 */
export const MAX_PROCESS_COMMANDS = 16;

/** The process's gate ({@linkcode MAX_PROCESS_COMMANDS}), taken after a session's own slot. */
export const processCommandGate: CommandGate = createCommandGate(MAX_PROCESS_COMMANDS);

/**
 * Take a slot of `owner`'s gate, then one of the process's ({@linkcode processCommandGate}),
 * always in that order; resolves the function that gives both back, or undefined when `signal`
 * aborted first (nothing held then).
 */
export async function enterCommandGates(
  owner: object | undefined,
  signal: AbortSignal,
): Promise<(() => void) | undefined> {
  const own = await commandGateOf(owner).enter(signal);
  if (own === undefined) return undefined;
  const shared = await processCommandGate.enter(signal);
  if (shared === undefined) {
    own();
    return undefined;
  }
  return () => {
    shared();
    own();
  };
}

/** Gates by owner: a session's process registry (or whatever stands for the session). */
const gates = new WeakMap<object, CommandGate>();
/** The gate of calls with no owner to share one (one for the process). */
const unowned = createCommandGate();

/** The gate of `owner`'s commands, made on first use; the process-wide one without an owner. */
export function commandGateOf(owner: object | undefined): CommandGate {
  if (owner === undefined) return unowned;
  let gate = gates.get(owner);
  if (gate === undefined) gates.set(owner, gate = createCommandGate());
  return gate;
}
