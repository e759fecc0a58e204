/**
 * Images for a model without vision: every
 * `image_url` input becomes an `[attached image: <path|url>]` line. A data
 * URL is saved into the session scratchpad as `upload-<8hex>.<ext>`
 * (created exclusively, never overwritten); an http(s) URL is referenced as
 * is; anything else becomes `[an attached image could not be saved and was
 * dropped]`. The lines go after the last user text that is not a whole
 * `[handoff_from]` / `[model_switch_from]` block, separated by a blank line,
 * or into a new user text when there is none. A failed scratchpad write
 * throws.
 *
 * @module
 */
import { join } from "node:path";
import { userText } from "../protocol/builders.ts";
import type { CompleteMessage, TextMessage } from "../protocol/types.ts";
import { randomHex8 } from "../state/ids.ts";

/** The line of an image that could not be kept. */
export const DROPPED_IMAGE_LINE = "[an attached image could not be saved and was dropped]";

const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/jpg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
};

const WHOLE_ORIGIN_BLOCK = /^\s*\[(handoff_from|model_switch_from)\][\s\S]*\[\/\1\]\s*$/;

function decodeBase64(data: string): Uint8Array | undefined {
  try {
    const bin = atob(data.replace(/\s+/g, ""));
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return undefined;
  }
}

async function saveDataUrl(url: string, scratchpad: string): Promise<string | undefined> {
  const m = /^data:([^;,]*)(;base64)?,([\s\S]*)$/.exec(url);
  if (!m || !m[2]) return undefined;
  const bytes = decodeBase64(m[3]!);
  if (!bytes) return undefined;
  const ext = EXTENSIONS[m[1]!.toLowerCase()] ?? "bin";
  await Deno.mkdir(scratchpad, { recursive: true, mode: 0o700 });
  for (let attempt = 0; attempt < 16; attempt++) {
    const path = join(scratchpad, `upload-${randomHex8()}.${ext}`);
    try {
      await Deno.writeFile(path, bytes, { createNew: true });
      return path;
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    }
  }
  throw new Error(`cannot find a free upload name in ${scratchpad}`);
}

/** The attachment line of one image input. */
async function attachmentLine(url: string, scratchpad: string): Promise<string> {
  if (/^https?:\/\//i.test(url)) return `[attached image: ${url}]`;
  if (url.startsWith("data:")) {
    const path = await saveDataUrl(url, scratchpad);
    if (path) return `[attached image: ${path}]`;
  }
  return DROPPED_IMAGE_LINE;
}

/** `input` with every `image_url` folded into attachment lines (unchanged when it has none). */
export async function foldImages(
  input: readonly CompleteMessage[],
  scratchpad: string,
): Promise<CompleteMessage[]> {
  if (!input.some((m) => m.type === "image_url")) return [...input];
  const lines: string[] = [];
  const kept: CompleteMessage[] = [];
  for (const m of input) {
    if (m.type === "image_url") lines.push(await attachmentLine(m.image_url, scratchpad));
    else kept.push(m);
  }
  const block = lines.join("\n");
  for (let i = kept.length - 1; i >= 0; i--) {
    const m = kept[i]!;
    if (m.type !== "text" || m.role !== "user" || WHOLE_ORIGIN_BLOCK.test(m.text)) continue;
    const folded: TextMessage = { ...m, text: m.text === "" ? block : `${m.text}\n\n${block}` };
    kept[i] = folded;
    return kept;
  }
  return [...kept, userText(block)];
}
