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
export { PROCESS_IMAGES_MAX_BYTES } from "../protocol/image_data.ts";

const bytesOf = new WeakMap<object, number>();
const holders = new Set<WeakRef<object>>();
const refOf = new WeakMap<object, WeakRef<object>>();

/** Record that `holder` now holds `bytes` of image data (0: it lets them go). */
export function holdImages(holder: object, bytes: number): void {
  if (bytes > 0) {
    bytesOf.set(holder, bytes);
    if (!refOf.has(holder)) {
      const ref = new WeakRef(holder);
      refOf.set(holder, ref);
      holders.add(ref);
    }
    return;
  }
  bytesOf.delete(holder);
  const ref = refOf.get(holder);
  if (ref !== undefined) holders.delete(ref);
  refOf.delete(holder);
}

/** The image data every holder but `holder` holds. */
export function imagesHeldBesides(holder: object | undefined): number {
  let total = 0;
  for (const ref of holders) {
    const h = ref.deref();
    if (h === undefined) holders.delete(ref);
    else if (h !== holder) total += bytesOf.get(h) ?? 0;
  }
  return total;
}
