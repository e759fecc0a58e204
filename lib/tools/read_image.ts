/**
 * read_image (§6.7): show the model an image — a workspace file or an
 * http(s) URL, PNG/JPEG/GIF/WebP, at most 5 MiB. The output is
 * `<mime>, <size>` and the image travels as a data URL (delivered only when
 * the call completes). Offered to vision models only.
 *
 * @module
 */
import { z } from "zod";
import { parseArgs } from "./_args.ts";
import { formatBytes, imageDataUrl, loadImage } from "./_image_source.ts";
import {
  BUILTIN_TOOL_LIMITS,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  type ToolEvent,
} from "./tool.ts";

/** The default read_image definition. */
export const READ_IMAGE_DEFINITION: ToolDefinition = {
  name: "read_image",
  description:
    "Look at an image: a file in the workspace or an http(s) URL. PNG, JPEG, GIF and WebP up to " +
    "5 MB; the image is attached to the result for you to view.",
  parameters: {
    type: "object",
    properties: {
      source: {
        type: "string",
        description:
          "An http(s) URL, or a file path (relative to the workspace, or absolute inside it).",
      },
    },
    required: ["source"],
  },
  ...BUILTIN_TOOL_LIMITS.read_image!,
  forModel: "vision",
};

const schema = z.object({ source: z.string().trim().min(1) });

async function* runReadImage(
  definition: ToolDefinition,
  rawArgs: Record<string, unknown>,
  ctx: ToolContext,
): AsyncGenerator<ToolEvent> {
  const args = parseArgs(definition, schema, rawArgs);
  if (!args.ok) {
    yield { type: "delta", text: args.message };
    return yield { type: "result", status: "failed" };
  }
  const loaded = await loadImage(args.value.source, ctx);
  if (!loaded.ok) {
    yield { type: "delta", text: loaded.message };
    return yield { type: "result", status: "failed" };
  }
  const { image } = loaded;
  yield { type: "delta", text: `${image.mime}, ${formatBytes(image.bytes.length)}` };
  yield { type: "images", images: [imageDataUrl(image)] };
}

/** Build read_image from a (possibly config-overridden) definition. */
export function createReadImageTool(definition: ToolDefinition = READ_IMAGE_DEFINITION): Tool {
  return { definition, run: (args, ctx) => runReadImage(definition, args, ctx) };
}
