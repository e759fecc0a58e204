/**
 * The byte arrays of output already read, kept by an output buffer to
 * encode its next output into. A command's output arrives in pieces of up to
 * 64 KiB, held as bytes until read: a fresh array per piece leaves a dead one
 * behind each, and with 16 commands streaming at once tens of MB of them
 * piled up between collections (attack round 24). A buffer keeps the large
 * arrays it is done with, up to {@linkcode MAX_SPARE_BYTES}: a reader that
 * keeps up needs a few, and a buffer its reader left (a session idle or
 * ended, up to 64 of them) pins no more than that.
 *
 * @module
 */

/** Arrays smaller than this are neither kept nor encoded into (bytes). */
export const SPARE_MIN_BYTES = 16 * 1024;

/** The most bytes of arrays one set keeps (about the unread output of a buffer at its limit). */
export const MAX_SPARE_BYTES = 1024 * 1024;

/** Spare arrays for encoding text. */
export interface SpareBytes {
  /** `text` as UTF-8: in a kept array when one holds it, else in a new one. */
  encode(text: string): Uint8Array;
  /**
   * Keep the array under `bytes` (its whole buffer, which nothing else may
   * use any more) for a later {@linkcode SpareBytes.encode}, unless the set
   * holds {@linkcode MAX_SPARE_BYTES} with it.
   */
  give(bytes: Uint8Array): void;
  /** Bytes of the arrays kept. */
  readonly heldBytes: number;
  /** Let every kept array go (the process holds too much unread output). */
  clear(): void;
}

const encoder = new TextEncoder();

/** An empty set of spare arrays. */
export function spareBytes(): SpareBytes {
  const kept: Uint8Array[] = [];
  let held = 0;

  return {
    encode(text) {
      // A text this short encodes to less than a kept array: a new array is as good.
      if (text.length * 3 < SPARE_MIN_BYTES) return encoder.encode(text);
      for (let i = kept.length - 1; i >= 0; i--) {
        const array = kept[i]!;
        if (array.length < text.length) continue;
        const { read, written } = encoder.encodeInto(text, array);
        if (read < text.length) continue; // too small after all
        kept.splice(i, 1);
        held -= array.length;
        return array.subarray(0, written);
      }
      return encoder.encode(text);
    },
    give(bytes) {
      const array = new Uint8Array(bytes.buffer as ArrayBuffer);
      if (array.length < SPARE_MIN_BYTES || held + array.length > MAX_SPARE_BYTES) return;
      kept.push(array);
      held += array.length;
    },
    get heldBytes() {
      return held;
    },
    clear() {
      kept.length = 0;
      held = 0;
    },
  };
}
