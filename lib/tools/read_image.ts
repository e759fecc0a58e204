/**
 * read_image: show the model an image — a workspace file or an
 * http(s) URL, PNG/JPEG/GIF/WebP, at most 5 MiB. The output is
 * `<mime>, <size>` and the image travels as a data URL (delivered only when
 * the call completes). Offered to vision models only.
 *
 * @module
 */
import { z } from "zod";
import { formatBytes, imageDataUrl, imageSourceArg, loadImage } from "./_image_source.ts";
import type { FileToolContext, ToolDefinition, ToolEvent } from "./tool.ts";
import { type DefinedTool, defineTool } from "./define.ts";
import { filePreview } from "../display/tool_preview.ts";

const schema = z.object({ source: imageSourceArg });

async function* runReadImage(
  args: z.infer<typeof schema>,
  ctx: FileToolContext,
): AsyncGenerator<ToolEvent> {
  const loaded = await loadImage(args.source, ctx);
  if (!loaded.ok) {
    yield { type: "delta", text: loaded.message };
    return yield { type: "result", status: "failed" };
  }
  const { image } = loaded;
  yield { type: "delta", text: `${image.mime}, ${formatBytes(image.bytes.length)}` };
  yield { type: "images", images: [imageDataUrl(image)] };
}

/** read_image, declared once: schema, limits, permission, preview and implementation. */
export const readImageTool: DefinedTool<FileToolContext> = defineTool({
  name: "read_image",
  description:
    "Look at an image: a file in the workspace or an http(s) URL. PNG, JPEG, GIF and WebP up to " +
    "5 MB; the image is attached to the result for you to view.",
  args: schema,
  permission: "r",
  timeoutMs: 60_000,
  maxOutputLength: 16_000,
  forModel: "vision",
  preview: filePreview("source"),
  run: runReadImage,
});

/** The default read_image definition. */
export const READ_IMAGE_DEFINITION: ToolDefinition = readImageTool.definition;

/** Build read_image from a (possibly config-overridden) definition. */
export const createReadImageTool: DefinedTool<FileToolContext>["create"] = readImageTool.create;
