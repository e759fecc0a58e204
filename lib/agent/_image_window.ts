/**
 * The images the history sent to the model keeps inline. Each request
 * resends the whole history, and an image travels as base64 copied several
 * times on its way (the request body, its bytes), so a model that keeps
 * reading images would grow every request, and penguin with it. The images
 * of tool outputs are kept newest first while they total at most
 * {@linkcode HISTORY_IMAGES_MAX_BYTES}, and at most what the process's other
 * conversations (a session's subagents) leave of
 * {@linkcode PROCESS_IMAGES_MAX_BYTES}; an output past that (and every older
 * one) is sent without its images, a note in their place. The trace keeps
 * them: it records each output as the tool returned it.
 *
 * @module
 */
import { MiB } from "../protocol/format_size.ts";
import {
  HISTORY_IMAGES_MAX_BYTES,
  imageDataBytes,
  PROCESS_IMAGES_MAX_BYTES,
} from "../protocol/image_data.ts";
import { holdImages, imagesHeldBesides } from "../tools/image_ledger.ts";
import type { CompleteMessage } from "../protocol/types.ts";

/** The note that stands, in the history sent to the model, for an image of an older tool output. */
export const HISTORY_IMAGE_NOTE =
  `[image omitted: newer images passed what penguin keeps of a conversation (${
    HISTORY_IMAGES_MAX_BYTES / MiB
  } MiB; ${
    PROCESS_IMAGES_MAX_BYTES / MiB
  } MiB with its subagents' or parent's); read it again to see it]`;

/** The message that stands for each output without its images: the same one for the same output. */
const withoutThem = new WeakMap<CompleteMessage, CompleteMessage>();

/** `m` without its images, a note for each at the end of its output (other messages as they are). */
export function withoutImages(m: CompleteMessage): CompleteMessage {
  if (m.type !== "tool_call_output" || !m.images?.length) return m;
  let out = withoutThem.get(m);
  if (out === undefined) {
    const { images, ...rest } = m;
    const notes = images.map(() => HISTORY_IMAGE_NOTE).join("\n");
    out = { ...rest, output: rest.output === "" ? notes : `${rest.output}\n${notes}` };
    withoutThem.set(m, out);
  }
  return out;
}

/**
 * The indexes (newest first) of the tool outputs of `messages` whose images
 * the history sent to the model leaves out: walking back from the newest,
 * once the images would pass `cap` bytes together, that output's and every
 * older one's; and the bytes of the images kept.
 */
export function imageWindow(
  messages: readonly CompleteMessage[],
  cap: number = HISTORY_IMAGES_MAX_BYTES,
): { outside: number[]; kept: number } {
  const outside: number[] = [];
  let total = 0;
  let full = false;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.type !== "tool_call_output" || !m.images?.length) continue;
    if (!full) {
      const bytes = m.images.reduce((n, url) => n + imageDataBytes(url), 0);
      if (total + bytes <= cap) {
        total += bytes;
        continue;
      }
      full = true;
    }
    outside.push(i);
  }
  return { outside, kept: total };
}

/**
 * `wire` and then `more`, as the history is sent: the images outside the
 * window left out. Those of `wire` are left out of it for good, and of
 * `history` (the same messages, parallel to `wire`, with their own call ids).
 * With `holder` (the conversation), the window is also held to what the
 * process's other conversations leave of {@linkcode PROCESS_IMAGES_MAX_BYTES},
 * and what it keeps is counted for them (lib/tools/image_ledger.ts).
 */
export function windowImages(
  wire: CompleteMessage[],
  history: CompleteMessage[],
  more: readonly CompleteMessage[],
  holder?: object,
): CompleteMessage[] {
  const all = [...wire, ...more];
  const cap = holder === undefined ? HISTORY_IMAGES_MAX_BYTES : Math.max(
    0,
    Math.min(HISTORY_IMAGES_MAX_BYTES, PROCESS_IMAGES_MAX_BYTES - imagesHeldBesides(holder)),
  );
  const { outside, kept } = imageWindow(all, cap);
  for (const i of outside) {
    all[i] = withoutImages(all[i]!);
    if (i >= wire.length) continue;
    wire[i] = all[i]!;
    history[i] = withoutImages(history[i]!);
  }
  if (holder !== undefined) holdImages(holder, kept);
  return all;
}
