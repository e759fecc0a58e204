/**
 * A budget of file memory shared by the calls of one tool worker pool.
 *
 * Every worker of a pool lives in the same process, so calls that each hold
 * a large file (an `edit_file` holds the text, the edited text and its diff)
 * add up: four edits of 16 MiB files at once took the tool host near 800 MB.
 * A call holds a share of the budget (in bytes of file text) for as long as
 * it needs the memory; a call whose share does not fit waits, in order of
 * asking, until others give theirs back. A share is capped at the whole
 * budget, so a call alone always gets it.
 *
 * @module
 */

/**
 * Bytes of file text the calls of one pool may hold at once (16 MiB). An
 * edit holds its text before and after, and costs some ten times that at
 * its peak (the bytes, the strings, the diff), so one edit of the largest
 * file (`EDIT_FILE_MAX_BYTES`) runs alone.
 */
export const DEFAULT_FILE_MEMORY_BUDGET = 16 * 1024 * 1024;

/** The shares held, and the calls waiting for one. */
export interface MemoryBudget {
  /**
   * Make call `id` hold `bytes` (capped at the budget), replacing what it
   * held: the old share is given back first, so two calls growing their
   * shares cannot wait on each other, and a call that held one goes first
   * in line (it holds its file already). Resolves `true` once held, `false`
   * when `signal` aborted first (then the call holds nothing).
   */
  hold(id: number, bytes: number, signal: AbortSignal): Promise<boolean>;
  /** Give back what call `id` holds, and stop its waiting. */
  release(id: number): void;
  /** Bytes held now, over every call. */
  readonly used: number;
}

interface Waiter {
  id: number;
  bytes: number;
  grant: (held: boolean) => void;
}

/** A budget of `total` bytes. */
export function createMemoryBudget(total: number = DEFAULT_FILE_MEMORY_BUDGET): MemoryBudget {
  const held = new Map<number, number>();
  const waiting: Waiter[] = [];
  let used = 0;

  const giveBack = (id: number) => {
    used -= held.get(id) ?? 0;
    held.delete(id);
  };
  // First come, first served: a large share at the head is not overtaken by smaller ones.
  const wake = () => {
    while (waiting.length > 0 && used + waiting[0]!.bytes <= total) {
      const w = waiting.shift()!;
      held.set(w.id, w.bytes);
      used += w.bytes;
      w.grant(true);
    }
  };
  const stopWaiting = (id: number) => {
    const at = waiting.findIndex((w) => w.id === id);
    if (at >= 0) waiting.splice(at, 1)[0]!.grant(false);
  };

  return {
    hold(id, bytes, signal) {
      stopWaiting(id);
      const regrow = held.has(id);
      giveBack(id);
      if (signal.aborted) {
        wake();
        return Promise.resolve(false);
      }
      const want = Math.max(0, Math.min(Math.ceil(bytes), total));
      return new Promise<boolean>((resolve) => {
        const onAbort = () => {
          stopWaiting(id);
          wake();
        };
        signal.addEventListener("abort", onAbort, { once: true });
        const w: Waiter = {
          id,
          bytes: want,
          grant: (ok) => {
            signal.removeEventListener("abort", onAbort);
            resolve(ok);
          },
        };
        if (regrow) waiting.unshift(w);
        else waiting.push(w);
        wake();
      });
    },
    release(id) {
      stopWaiting(id);
      giveBack(id);
      wake();
    },
    get used() {
      return used;
    },
  };
}
