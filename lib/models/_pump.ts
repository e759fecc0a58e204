/**
 * Pumping one open response: read its bytes (each read guarded by the idle
 * timeout) into its intake (./_intake.ts: SSE framing or a JSON body, the
 * wire parser, the translator) and hand the payloads on. Returns the
 * outcome of the stream.
 *
 * Partial deltas are held for a moment (./_hold.ts) and handed on merged
 * (consecutive text, reasoning or one call's argument deltas become one): a
 * model streaming a few characters an event, one event a network read,
 * would otherwise run the consumer once per event. A response that keeps
 * sending events without content, or streams for too long, is stopped
 * (./_response_clock.ts).
 *
 * @module
 */
import type { ModelPayload } from "../protocol/types.ts";
import { classifyException } from "./classify.ts";
import type { ModelOutcome, ModelStreamItem } from "./outcome.ts";
import type { Translator } from "./translate.ts";
import type { OpenedRequest, RequestSite } from "./_open.ts";
import type { RequestGuard } from "./_request_guard.ts";
import { createIntake, finalOutcome, type Intake } from "./_intake.ts";
import { createHold, WAKE } from "./_hold.ts";
import { largeGarbage } from "../state/_gc.ts";
import { claimEventRoom, type EventRoomClaim, LARGE_EVENT } from "./_event_room.ts";

export { coalesce } from "./_hold.ts";
import { createResponseClock } from "./_response_clock.ts";

/** The time bounds of one response (./_response_clock.ts). */
export interface PumpBounds {
  /** The idle timeout (≤ 0: no bounds). */
  idleMs: number;
  /** The whole response's bound (default: a multiple of `idleMs`). */
  responseMs?: number | undefined;
  /** The clock (default `performance.now`). */
  now?: (() => number) | undefined;
}

/**
 * Copies of a large event left as garbage once it is parsed, each its size:
 * the framer's buffer, the event's data and the parse (a signature sent
 * whole is one string of the event's size). Counted as one, eight events of
 * 15 MB grew the heap by some 100 MB of them between two collections
 * (attack round 24 bounded R10).
 */
const EVENT_COPIES = 3;

/**
 * Whether the large event under way, which held `held` before this read was
 * parsed, has ended: then its copies count as garbage (../state/_gc.ts).
 */
function eventEnded(intake: Intake, held: number, largest: { held: number }): boolean {
  largest.held = Math.max(largest.held, held);
  if (intake.assembling() > LARGE_EVENT) return false;
  largeGarbage(EVENT_COPIES * largest.held, LARGE_EVENT);
  largest.held = 0;
  return true;
}

/**
 * Read `opened` to its end through `translator`. Payloads go to `pending`
 * and are yielded when due (./_hold.ts); what is still pending when this
 * returns (or throws) is the caller's to yield.
 */
export async function* pumpResponse(
  opened: OpenedRequest,
  translator: Translator,
  guard: RequestGuard,
  site: RequestSite,
  pending: ModelPayload[],
  bounds: PumpBounds = { idleMs: 0 },
): AsyncGenerator<ModelStreamItem, ModelOutcome> {
  const { reader } = opened;
  const hold = createHold(pending);
  const intake = createIntake(opened.module, opened.response, translator, hold.add);
  const clock = createResponseClock(bounds.idleMs, bounds.responseMs, bounds.now);
  const finished = () => translator.state.finish !== undefined;
  /** The next read, kept across a hand-on that interrupted the wait for it. */
  let next: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  /** The room for a large event (./_event_room.ts), held while one is under way. */
  let room: EventRoomClaim | undefined;
  /** The most the large event under way has held (counted once it has ended). */
  const largest = { held: 0 };
  try {
    for (;;) {
      let got: ReadableStreamReadResult<Uint8Array> | typeof WAKE;
      if (next === undefined && room === undefined && intake.assembling() > LARGE_EVENT) {
        room = claimEventRoom();
        // Waiting for the room is not the server being idle, and holds no delta from the display.
        clock.pause();
        for (const m of hold.take()) yield { kind: "message", message: m };
        try {
          await guard.race(room.granted);
        } catch (e) {
          return guard.interrupted(site.host) ?? classifyException(e, site.target);
        } finally {
          clock.resume();
        }
      }
      guard.arm();
      try {
        if (next === undefined) {
          next = guard.race(reader.read());
          next.catch(() => {}); // awaited below or by a later step; never unhandled
        }
        got = await hold.wait(next);
      } catch (e) {
        return guard.interrupted(site.host) ?? classifyException(e, site.target);
      } finally {
        guard.disarm();
      }
      if (got !== WAKE) {
        next = undefined;
        if (got.done) break;
        const before = intake.assembling();
        const r = intake.read(got.value);
        if (room !== undefined && eventEnded(intake, before + got.value.length, largest)) {
          room.release();
          room = undefined;
        }
        if (r.over) break;
        const late = clock.step(r.events, r.progressed, site.host);
        if (late) return finished() ? finalOutcome(translator, true, site.target) : late;
      }
      if (hold.due()) {
        clock.pause();
        for (const m of hold.take()) yield { kind: "message", message: m };
        clock.resume();
      }
      if (guard.userAborted) break;
    }
    const stop = guard.interrupted(site.host);
    if (stop) return finished() ? finalOutcome(translator, true, site.target) : stop;
    // Within the room still: a plain body is parsed here.
    return intake.end(site.target);
  } finally {
    // A large event (or plain body) the response ended within is garbage once read too.
    if (room !== undefined) largeGarbage(EVENT_COPIES * largest.held, LARGE_EVENT);
    room?.release();
    hold.dispose();
  }
}
