/**
 * How long one response may take. Bytes that keep coming hold off the idle
 * timeout (./_request_guard.ts), so a provider that streams events without
 * content — empty deltas, pings — or content at a trickle would otherwise be
 * read for as long as it likes. Two bounds, both from the idle timeout
 * (`model.timeoutMs`):
 *
 * - no progress: events for the idle timeout without any new text,
 *   reasoning or tool call stop the response like an idle stream;
 * - the whole response: {@linkcode RESPONSE_TIME_FACTOR} × the idle
 *   timeout (60 min at the default 120 s).
 *
 * Time counts only while penguin waits for or reads the stream: the time
 * its consumer holds a message (a prompt, a slow display) is not the
 * provider's.
 *
 * @module
 */
import { failureHeadline } from "./failure.ts";
import type { ModelOutcome } from "./outcome.ts";

/** A response may take this many idle timeouts in all. */
export const RESPONSE_TIME_FACTOR = 30;

/** The clock of one response. */
export interface ResponseClock {
  /** The consumer holds the stream from now (its time is not counted). */
  pause(): void;
  /** The stream is read again. */
  resume(): void;
  /**
   * `events` more events were read; `progressed` when they carried content.
   * The outcome that stops the response when a bound is passed, else undefined.
   */
  step(events: number, progressed: boolean, host: string | undefined): ModelOutcome | undefined;
}

/** Seconds or minutes for messages. */
function span(ms: number): string {
  if (ms >= 120_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${Math.round(ms)} ms`;
}

/**
 * A clock for a response with idle timeout `idleMs` (≤ 0: no bounds) and a
 * whole-response bound of `responseMs` (default {@linkcode RESPONSE_TIME_FACTOR} × `idleMs`).
 */
export function createResponseClock(
  idleMs: number,
  responseMs: number = RESPONSE_TIME_FACTOR * idleMs,
  now: () => number = () => performance.now(),
): ResponseClock {
  let paused = 0;
  let pausedAt: number | undefined;
  const streamTime = () => now() - paused;
  const start = streamTime();
  let progressAt = start;
  let idleEvents = 0;
  const stop = (host: string | undefined, reason: string, text: string): ModelOutcome => ({
    status: "timeout",
    failure: "timeout",
    error_message: `${
      failureHeadline("timeout", { host: host ?? "the provider", reason })
    }: ${text}`,
    ...(host !== undefined ? { host } : {}),
  });
  return {
    pause() {
      pausedAt ??= now();
    },
    resume() {
      if (pausedAt === undefined) return;
      paused += now() - pausedAt;
      pausedAt = undefined;
    },
    step(events, progressed, host) {
      if (idleMs <= 0) return undefined;
      const t = streamTime();
      if (progressed) {
        progressAt = t;
        idleEvents = 0;
      } else idleEvents += events;
      if (responseMs > 0 && t - start >= responseMs) {
        return stop(
          host,
          `response longer than ${span(responseMs)}`,
          `the response was still streaming after ${span(t - start)}; penguin stopped reading it ` +
            `(a response may take ${RESPONSE_TIME_FACTOR} × model.timeoutMs; raise model.timeoutMs ` +
            "in system_config.yaml for slow models)",
        );
      }
      if (!progressed && t - progressAt >= idleMs) {
        return stop(
          host,
          `no content for ${span(idleMs)}`,
          `the provider sent ${idleEvents} events in ${span(t - progressAt)} without any content ` +
            "(text, reasoning or tool calls); penguin stopped reading it as an idle stream",
        );
      }
      return undefined;
    },
  };
}
