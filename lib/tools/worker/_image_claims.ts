/**
 * The image data the calls of each model response have claimed in one tool
 * worker pool. read_image claims an image's size before it reads it: once
 * the images of a response would pass what they may be together
 * ({@linkcode RESPONSE_IMAGES_MAX_BYTES}), the image is neither read nor
 * sent to penguin (a response of 24 calls reading 5 MiB images took penguin
 * to 675 MB, attack round 19). Only the newest responses are remembered.
 *
 * @module
 */
import { RESPONSE_IMAGES_MAX_BYTES } from "../../protocol/image_data.ts";
import { forgetOldest } from "../../protocol/forget_oldest.ts";

/** Responses whose claims are remembered at most (the oldest is forgotten first). */
const REMEMBERED_RESPONSES = 64;

/** Claims of image data by response. */
export interface ImageClaims {
  /** Claim `bytes` for `responseId`: false (nothing claimed) when they would pass the bound. */
  claim(responseId: string | undefined, bytes: number): boolean;
}

/** An empty ledger bounding each response to `total` bytes. */
export function createImageClaims(total: number = RESPONSE_IMAGES_MAX_BYTES): ImageClaims {
  const claimed = new Map<string, number>();
  return {
    claim(responseId, bytes) {
      if (responseId === undefined) return true;
      const before = claimed.get(responseId) ?? 0;
      if (before + bytes > total) return false;
      claimed.delete(responseId); // the newest last
      claimed.set(responseId, before + bytes);
      forgetOldest(claimed, REMEMBERED_RESPONSES);
      return true;
    },
  };
}
