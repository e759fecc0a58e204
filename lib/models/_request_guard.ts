/**
 * What stops one model request: the caller's abort, or the idle timeout —
 * no upstream bytes for `idleMs` while a step is armed. Every
 * awaited step of the request races the guard, so either ends it at once.
 *
 * @module
 */
import { onAbort } from "../protocol/abort.ts";
import { failureHeadline } from "./failure.ts";
import type { ModelOutcome } from "./outcome.ts";

class Idle extends Error {
  override name = "IdleTimeout";
}

/** The guard of one request. */
export interface RequestGuard {
  /** Aborted by the caller or by the idle timeout: the fetch's signal. */
  readonly signal: AbortSignal;
  /** Whether the caller aborted. */
  readonly userAborted: boolean;
  /** Start (or restart) the idle timer for the next upstream step. */
  arm(): void;
  /** Stop the idle timer. */
  disarm(): void;
  /** Stop the timer and unlink from the caller's signal (the request is over). */
  dispose(): void;
  /** `p`, or a rejection with the abort reason as soon as the guard fires. */
  race<T>(p: Promise<T>): Promise<T>;
  /** The outcome when the guard fired (aborted, or an idle timeout naming `host`), else undefined. */
  interrupted(host: string | undefined): ModelOutcome | undefined;
}

/**
 * The idle timer: `onIdle` when a step stays armed for `idleMs` (≤ 0: never).
 * One timer at a time, not one per step: a stream of tiny events is read one
 * event a step, and setting and clearing a timer each time costs more than
 * the read. A step records when it started; the timer, when it fires early
 * for the step armed now, waits out the rest.
 */
function createIdleTimer(
  idleMs: number,
  onIdle: () => void,
): { arm(): void; disarm(): void; dispose(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let armed = false;
  let armedAt = 0;
  const fire = () => {
    timer = undefined;
    if (!armed) return;
    const left = idleMs - (performance.now() - armedAt);
    if (left > 0) timer = setTimeout(fire, left);
    else onIdle();
  };
  return {
    arm() {
      if (idleMs <= 0) return;
      armed = true;
      armedAt = performance.now();
      timer ??= setTimeout(fire, idleMs);
    },
    disarm: () => void (armed = false),
    dispose() {
      armed = false;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

/** A guard over the caller's `signal` with an idle timeout of `idleMs` (≤ 0: none). */
export function createRequestGuard(user: AbortSignal | undefined, idleMs: number): RequestGuard {
  // One controller per request, linked to the caller's signal until dispose():
  // AbortSignal.any() would tie every request's signal (and what fetch hangs on
  // it) to the caller's signal, which lives for the whole task.
  const ctl = new AbortController();
  const signal = ctl.signal;
  const unlink = onAbort(user, () => ctl.abort(user!.reason));
  const idleText = `No data from the provider for ${idleMs} ms (idle timeout)`;
  let idleFired = false;
  const idle = createIdleTimer(idleMs, () => {
    idleFired = true;
    ctl.abort(new Idle(idleText));
  });
  return {
    signal,
    get userAborted() {
      return user?.aborted === true;
    },
    arm: idle.arm,
    disarm: idle.disarm,
    dispose() {
      idle.dispose();
      unlink();
    },
    // One listener per step, removed when the step settles: racing a long-lived
    // promise instead would keep a reaction (and so every chunk read) alive for
    // as long as the caller's signal lives, i.e. the whole task.
    race: <T>(p: Promise<T>) =>
      new Promise<T>((resolve, reject) => {
        const off = onAbort(signal, () => reject(signal.reason));
        p.then(
          (v) => {
            off();
            resolve(v);
          },
          (e) => {
            off();
            reject(e);
          },
        );
      }),
    interrupted(host) {
      if (user?.aborted) {
        return {
          status: "aborted",
          error_message: "Request aborted by the user",
          failure: "aborted",
        };
      }
      if (!idleFired) return undefined;
      return {
        status: "timeout",
        error_message: host === undefined
          ? idleText
          : `${failureHeadline("timeout", { host, reason: `idle ${idleMs} ms` })}: ${idleText}`,
        failure: "timeout",
        ...(host !== undefined ? { host } : {}),
      };
    },
  };
}
