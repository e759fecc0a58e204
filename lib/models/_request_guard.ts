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
  /** `p`, or a rejection with the abort reason as soon as the guard fires. */
  race<T>(p: Promise<T>): Promise<T>;
  /** The outcome when the guard fired (aborted, or an idle timeout naming `host`), else undefined. */
  interrupted(host: string | undefined): ModelOutcome | undefined;
}

/** A guard over the caller's `signal` with an idle timeout of `idleMs` (≤ 0: none). */
export function createRequestGuard(user: AbortSignal | undefined, idleMs: number): RequestGuard {
  const idle = new AbortController();
  const signal = user ? AbortSignal.any([user, idle.signal]) : idle.signal;
  const idleText = `No data from the provider for ${idleMs} ms (idle timeout)`;
  let idleFired = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort(signal, () => reject(signal.reason));
  });
  aborted.catch(() => {});
  const disarm = () => clearTimeout(timer);
  return {
    signal,
    get userAborted() {
      return user?.aborted === true;
    },
    arm() {
      disarm();
      if (idleMs > 0) {
        timer = setTimeout(() => {
          idleFired = true;
          idle.abort(new Idle(idleText));
        }, idleMs);
      }
    },
    disarm,
    race: (p) => Promise.race([p, aborted]),
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
