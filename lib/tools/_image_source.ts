/**
 * Loading an image the model named: a file inside the workspace
 * (confined like the file tools) or an http(s) URL, at most 5 MiB, and
 * accepted only when its bytes are PNG, JPEG, GIF or WebP — whatever the
 * name or the server's Content-Type claims.
 *
 * @module
 */
import { z } from "zod";
import { concatBytes } from "../protocol/bytes.ts";
import { errorMessage } from "../protocol/errors.ts";
import { PROCESS_IMAGES_NOTE, RESPONSE_IMAGES_NOTE } from "../protocol/image_data.ts";
import { readFileBounded } from "./_bounded_read.ts";
import { isNotFound } from "./_files.ts";
import { IMAGE_MAX_BYTES } from "./file_limits.ts";
import type { FileToolContext } from "./tool.ts";
import { resolveWorkspacePath } from "./workspace_path.ts";

/** Largest image accepted, in bytes. */
export const MAX_IMAGE_BYTES: number = IMAGE_MAX_BYTES;

/** The image types models accept. */
export type ImageMime = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** A loaded image. */
export interface LoadedImage {
  /** Type found by sniffing the bytes. */
  mime: ImageMime;
  /** The image file. */
  bytes: Uint8Array;
}

/** A loaded image, or the explanation to return as a failed output. */
export type ImageLoad = { ok: true; image: LoadedImage } | { ok: false; message: string };

const ascii = (bytes: Uint8Array, from: number, text: string) =>
  bytes.length >= from + text.length &&
  [...text].every((c, i) => bytes[from + i] === c.charCodeAt(0));

/** The image type of `bytes` by their magic number, or undefined. */
export function sniffImage(bytes: Uint8Array): ImageMime | undefined {
  const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (bytes.length >= 8 && png.every((b, i) => bytes[i] === b)) return "image/png";
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    return "image/jpeg";
  }
  if (ascii(bytes, 0, "GIF87a") || ascii(bytes, 0, "GIF89a")) return "image/gif";
  if (ascii(bytes, 0, "RIFF") && ascii(bytes, 8, "WEBP")) return "image/webp";
  return undefined;
}

/** `812 B`, `12.3 KB`, `4.20 MB` (binary units). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(2)} MB`;
}

/** `data:<mime>;base64,<…>`. */
export function imageDataUrl(image: LoadedImage): string {
  return `data:${image.mime};base64,${image.bytes.toBase64()}`;
}

/** The memory an image of `size` bytes takes as it is loaded: its bytes and its base64 data URL. */
export function imageMemoryBytes(size: number): number {
  return size + Math.ceil(size / 3) * 4;
}

const LIMIT_TEXT = `${MAX_IMAGE_BYTES / (1024 * 1024)} MB`;

function accept(source: string, bytes: Uint8Array, claimed?: string): ImageLoad {
  if (bytes.length === 0) {
    return { ok: false, message: `Cannot read image "${source}": it is empty (0 bytes).` };
  }
  const mime = sniffImage(bytes);
  if (!mime) {
    const seen = claimed ? ` (the server called it ${claimed})` : "";
    return {
      ok: false,
      message:
        `Cannot read image "${source}": its content is not a PNG, JPEG, GIF or WebP image${seen}.`,
    };
  }
  return { ok: true, image: { mime, bytes } };
}

async function fromUrl(source: string, url: URL, ctx: FileToolContext): Promise<ImageLoad> {
  const signal = ctx.signal;
  const tooLarge = (size: string) => ({
    ok: false as const,
    message: `Cannot read image "${source}": it is ${size}, over the ${LIMIT_TEXT} limit.`,
  });
  let res: Response;
  try {
    res = await fetch(url, { signal, redirect: "follow" });
  } catch (err) {
    if (signal.aborted) throw err;
    return { ok: false, message: `Cannot fetch image "${source}": ${errorMessage(err)}.` };
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    return {
      ok: false,
      message: `Cannot fetch image "${source}": the server answered HTTP ${res.status}${
        res.statusText ? ` ${res.statusText}` : ""
      }.`,
    };
  }
  const declared = Number(res.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > MAX_IMAGE_BYTES) {
    await res.body?.cancel().catch(() => {});
    return tooLarge(formatBytes(declared));
  }
  // Claimed before the body is read, as a file's size is (what it declares, else the most it may
  // be): URL images fetched at once by many calls were read whole, none of them counted (attack
  // round 23 bounded A05).
  const claim = ctx.claimImage
    ? await ctx.claimImage(Number.isFinite(declared) ? declared : MAX_IMAGE_BYTES)
    : true;
  if (claim !== true) {
    await res.body?.cancel().catch(() => {});
    return { ok: false, message: claim === "process" ? PROCESS_IMAGES_NOTE : RESPONSE_IMAGES_NOTE };
  }
  const parts: Uint8Array[] = [];
  let total = 0;
  if (res.body) {
    const reader = res.body.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > MAX_IMAGE_BYTES) {
        await reader.cancel().catch(() => {});
        return tooLarge(`more than ${LIMIT_TEXT}`);
      }
      parts.push(value);
    }
  }
  return accept(source, concatBytes(parts), res.headers.get("content-type") ?? undefined);
}

async function fromPath(source: string, ctx: FileToolContext): Promise<ImageLoad> {
  const at = await resolveWorkspacePath(source, ctx, "read");
  if (!at.ok) return { ok: false, message: at.message };
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(at.real);
  } catch (err) {
    if (isNotFound(err)) {
      return {
        ok: false,
        message:
          `Image not found: "${source}". Relative paths resolve against the workspace (${ctx.workspace}).`,
      };
    }
    return { ok: false, message: `Cannot read image "${source}": ${errorMessage(err)}.` };
  }
  if (!info.isFile) {
    return { ok: false, message: `Cannot read image "${source}": it is not a regular file.` };
  }
  if (info.size > MAX_IMAGE_BYTES) {
    return {
      ok: false,
      message: `Cannot read image "${source}": it is ${
        formatBytes(info.size)
      }, over the ${LIMIT_TEXT} limit.`,
    };
  }
  // Past what the images of the call's response may be together, the image is not read at all.
  const claim = ctx.claimImage ? await ctx.claimImage(info.size) : true;
  if (claim !== true) {
    return { ok: false, message: claim === "process" ? PROCESS_IMAGES_NOTE : RESPONSE_IMAGES_NOTE };
  }
  // The bytes and their data URL, held from the tool host's memory budget: calls reading large
  // images at once wait for each other instead of adding up (attack round 19).
  if (ctx.holdMemory && !(await ctx.holdMemory(imageMemoryBytes(info.size)))) {
    throw ctx.signal.reason;
  }
  let bytes: Uint8Array;
  try {
    const read = await readFileBounded(at.real, MAX_IMAGE_BYTES, ctx.signal);
    if (!read.ok) {
      if (read.reason === "aborted") throw ctx.signal.reason;
      if (read.reason === "not-a-file") {
        return { ok: false, message: `Cannot read image "${source}": it is not a regular file.` };
      }
      return {
        ok: false,
        message: `Cannot read image "${source}": it grew past the ${LIMIT_TEXT} limit while read.`,
      };
    }
    bytes = read.bytes;
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    return { ok: false, message: `Cannot read image "${source}": ${errorMessage(err)}.` };
  }
  // A file that grew while read (within the limit) holds its share anew.
  if (
    ctx.holdMemory && bytes.length > info.size &&
    !(await ctx.holdMemory(imageMemoryBytes(bytes.length)))
  ) {
    throw ctx.signal.reason;
  }
  return accept(source, bytes);
}

/** The `source` parameter of the image tools: what {@linkcode loadImage} reads. */
export const imageSourceArg: z.ZodString = z.string().trim().min(1).describe(
  "An http(s) URL, or a file path (relative to the workspace, or absolute inside it).",
);

/**
 * Load the image `source` names: an http(s) URL (refused when the sandbox's
 * network is off), or a path inside the workspace or scratchpad.
 */
export function loadImage(source: string, ctx: FileToolContext): Promise<ImageLoad> {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source)) {
    let url: URL;
    try {
      url = new URL(source);
    } catch {
      return Promise.resolve({ ok: false, message: `"${source}" is not a valid URL.` });
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return Promise.resolve({
        ok: false,
        message:
          `Cannot read image "${source}": only http(s) URLs and workspace paths are supported.`,
      });
    }
    // penguin fetches outside the sandbox: with the network off for the model's commands, a URL
    // would still carry workspace data out (its query) or probe the host's network.
    if (ctx.sandbox?.network === false) {
      return Promise.resolve({
        ok: false,
        message: `Cannot fetch image "${source}": the network is off for this session ` +
          `(--network off), for URLs too; use an image file in the workspace, or run with --network on.`,
      });
    }
    return fromUrl(source, url, ctx);
  }
  return fromPath(source, ctx);
}
