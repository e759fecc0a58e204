/**
 * Room for request bodies built whole in a penguin process. A body built
 * whole is its UTF-8 bytes, joined from its messages' bytes and copied again
 * by fetch, for as long as the request is being sent: a session and its
 * subagents sending theirs at once held several copies of every context
 * together (eight subagents each resending 4 to 12 MB of signatures:
 * 640 MB, some 200 MB of it outside V8's heap; attack round 25). A body that
 * does not fit is streamed in pieces instead (./_json_body.ts
 * `jsonBodyStream`): the same JSON, sent with chunked transfer encoding
 * rather than a length.
 *
 * @module
 */

const MiB = 1024 * 1024;

/**
 * Characters of history the bodies built whole and in flight may hold
 * together (4 MiB); a larger history is always streamed.
 */
export const WHOLE_BODIES_CHARS = 4 * MiB;

/** Characters of history under which a body is built whole whatever is in flight (1 MiB). */
export const SMALL_BODY_CHARS = MiB;

let inFlight = 0;

/**
 * Room to build a body of a `chars`-character history whole: a release
 * (idempotent) to call once fetch has sent it, or `undefined` when it is to
 * be streamed.
 */
export function claimWholeBody(chars: number): (() => void) | undefined {
  if (chars >= SMALL_BODY_CHARS && inFlight + chars > WHOLE_BODIES_CHARS) return undefined;
  inFlight += chars;
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    inFlight -= chars;
  };
}

/** Characters of history the bodies built whole hold now (tests). */
export function wholeBodiesInFlight(): number {
  return inFlight;
}
