/**
 * What image data each conversation of this process holds, for the
 * process-wide bound ({@linkcode PROCESS_IMAGES_MAX_BYTES}): a history
 * window's images (lib/agent/_image_window.ts) and a running response's
 * (lib/agent/_tool_phase.ts, `executeTool`). A holder is any object; it
 * counts while it holds bytes and stops counting once it lets them go or is
 * collected (a conversation dropped without letting go is not counted
 * forever).
 *
 * @module
 */
import { createHolderLedger } from "../protocol/holder_ledger.ts";

export { PROCESS_IMAGES_MAX_BYTES } from "../protocol/image_data.ts";

const ledger = createHolderLedger();

/** Record that `holder` now holds `bytes` of image data (0: it lets them go). */
export function holdImages(holder: object, bytes: number): void {
  ledger.hold(holder, bytes);
}

/** The image data every holder but `holder` holds. */
export function imagesHeldBesides(holder: object | undefined): number {
  return ledger.heldBesides(holder);
}
