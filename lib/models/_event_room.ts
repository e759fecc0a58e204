/**
 * Room for one large server-sent event at a time in the process. An event
 * is held whole until it ends (a signature or a tool call's arguments sent
 * as one event may be tens of megabytes), and it costs several times its
 * size while it is framed, decoded and parsed, before any limit on what a
 * response keeps can judge it: eight subagents answering a 15 MB signature
 * each at once took penguin to 546 MB (attack round 24 bounded R10).
 *
 * A response whose event under way has passed {@linkcode LARGE_EVENT}
 * characters reads no further until it has the room; it gives the room back
 * once that event has ended (or the response has). The others wait, their
 * bytes left in the connection, in the order they asked. The holder waits
 * on nothing but its own connection, so the room always comes free: when
 * its event ends, or its response ends, fails or is stopped.
 *
 * @module
 */

/**
 * Characters of an event under way past which a response needs the room to
 * read on (64 KiB; real events hold a few KB). At 1 MiB, eight subagents
 * streaming events of just under it went past both the room and the
 * collector of large garbage: 461-575 MB (attack round 25 bounded C3).
 */
export const LARGE_EVENT = 64 * 1024;

/** One response's claim on the room. */
export interface EventRoomClaim {
  /** Resolves once this response holds the room. */
  readonly granted: Promise<void>;
  /** Give the room back, or stop waiting for it. Idempotent. */
  release(): void;
}

let holder: object | undefined;
const queue: { claim: object; grant: () => void }[] = [];

/** Ask for the room; granted at once when it is free. */
export function claimEventRoom(): EventRoomClaim {
  const claim = {};
  let grant = () => {};
  const granted = new Promise<void>((resolve) => grant = resolve);
  if (holder === undefined) {
    holder = claim;
    grant();
  } else queue.push({ claim, grant });
  let done = false;
  return {
    granted,
    release() {
      if (done) return;
      done = true;
      if (holder !== claim) {
        const i = queue.findIndex((q) => q.claim === claim);
        if (i >= 0) queue.splice(i, 1);
        return;
      }
      const next = queue.shift();
      holder = next?.claim;
      next?.grant();
    },
  };
}

/** How many responses wait for the room now (tests). */
export function eventRoomWaiting(): number {
  return queue.length;
}
