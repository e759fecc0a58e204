/**
 * The size of an image attached to a tool's output (a data URL, as the
 * image tools and MCP servers return them), and the bounds on the images
 * of one model response and of the history sent to the model. An image
 * travels as base64 and is copied several times on its way (the trace, the
 * request body), so what many calls return together is bounded, not only
 * what one call reads.
 *
 * @module
 */
import { MiB } from "./format_size.ts";

/**
 * Image data the tool calls of one model response may return together
 * (decoded bytes): four images of the 5 MiB a call reads at most. A request
 * holding them is some 27 MB of base64, under the 32 MB a request body may
 * have at Anthropic.
 */
export const RESPONSE_IMAGES_MAX_BYTES = 20 * MiB;

/** The note that stands for an image past what the calls of one response may return together. */
export const RESPONSE_IMAGES_NOTE = `[image omitted: the images of this response passed ${
  RESPONSE_IMAGES_MAX_BYTES / MiB
} MiB; read fewer at once]`;

/**
 * Image data of tool outputs that the history sent to the model keeps
 * inline (decoded bytes), newest first; older images are replaced by a note.
 */
export const HISTORY_IMAGES_MAX_BYTES = 20 * MiB;

/**
 * Image data all the conversations of one penguin process may hold together
 * (decoded bytes): the images in their history windows and those the calls of
 * their running responses returned. One conversation alone never reaches it
 * (a full window and a full response); a session with subagents shares it, so
 * eight subagents reading images no longer hold eight windows and eight
 * responses' worth (attack round 20 bounded repro02: ~900 MB).
 */
export const PROCESS_IMAGES_MAX_BYTES = HISTORY_IMAGES_MAX_BYTES + RESPONSE_IMAGES_MAX_BYTES;

/** The note that stands for an image past what the process's conversations may hold together. */
export const PROCESS_IMAGES_NOTE =
  `[image omitted: the images of this session and its subagents passed ${
    PROCESS_IMAGES_MAX_BYTES / MiB
  } MiB; read it again once fewer are held]`;

/** The bytes an image stands for: what a base64 `data:` URL decodes to, else the URL's length. */
export function imageDataBytes(url: string): number {
  if (!url.startsWith("data:")) return url.length;
  const comma = url.indexOf(",");
  if (comma < 0 || !url.slice(0, comma).endsWith(";base64")) return url.length;
  const chars = url.length - comma - 1;
  const pad = url.endsWith("==") ? 2 : url.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((chars * 3) / 4) - pad);
}
