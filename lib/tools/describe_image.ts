/**
 * describe_image: let a model without vision learn what an image shows.
 * The image (a workspace file or an http(s) URL) is loaded exactly as
 * read_image loads it — through the session's read_image tool, so a path
 * is confined the same way — then sent with a question to the project's
 * configured vision model in a one-off request (no tools, no system
 * prompt, no thinking); the answer is the tool's output, after a
 * `<mime>, <size> — described by <model_id>:` line.
 *
 * Offered only to text-only session models, and only when the project
 * names a vision model (`vision_model`): the session builds the tool with a
 * {@linkcode VisionDescriber} for that explicit pair.
 *
 * @module
 */
import { z } from "zod";
import { userText } from "../protocol/builders.ts";
import type { ImageUrlMessage } from "../protocol/types.ts";
import type { ModelEndpoint } from "../models/wire.ts";
import { formatBytes, imageSourceArg } from "./_image_source.ts";
import { PROCESS_IMAGES_NOTE, RESPONSE_IMAGES_NOTE } from "../protocol/image_data.ts";
import { filePreview } from "../display/tool_preview.ts";
import { type DefinedTool, defineTool, type ToolDeclaration } from "./define.ts";
import type { FileToolContext, Tool, ToolDefinition, ToolEvent } from "./tool.ts";

/** The question asked when the call gives none. */
export const DEFAULT_DESCRIBE_PROMPT =
  "Describe this image in detail: what it shows, any text in it (verbatim), and its layout.";

/** Output cap of the vision model's answer, in tokens (lowered to the model entry's own cap). */
export const DESCRIBE_MAX_TOKENS = 2048;

/** Longest wait for the vision model's next bytes. */
export const DESCRIBE_IDLE_TIMEOUT_MS = 60_000;

/** How the vision model's request ended, when it did not complete. */
export interface DescribeFailure {
  /** The stop reason (`failed`, `timeout`, `auth`, …). */
  status: string;
  /** What went wrong. */
  message: string;
}

/** The project's vision model, as the tool uses it. */
export interface VisionDescriber {
  /** The model id named in the output header. */
  modelId: string;
  /**
   * Ask about the image (a data URL): yields the answer's text as it
   * streams; returns a failure, or undefined when the request completed.
   */
  describe(
    imageUrl: string,
    prompt: string,
    signal: AbortSignal,
  ): AsyncGenerator<string, DescribeFailure | undefined>;
}

/** What a describe_image tool is built with. */
export interface DescribeImageDeps {
  /** The vision model. */
  describer: VisionDescriber;
  /** The session's read_image (confined): loads the image. */
  readImage: Tool<FileToolContext>;
}

/** A {@linkcode VisionDescriber} sending one streamed request to `endpoint`. */
export function modelDescriber(
  endpoint: ModelEndpoint,
  opts: { maxTokens?: number; fetch?: typeof fetch } = {},
): VisionDescriber {
  const maxTokens = Math.min(DESCRIBE_MAX_TOKENS, opts.maxTokens ?? DESCRIBE_MAX_TOKENS);
  return {
    modelId: endpoint.model_id,
    async *describe(imageUrl, prompt, signal) {
      const image: ImageUrlMessage = {
        type: "image_url",
        role: "user",
        image_url: imageUrl,
        stop_reason: "completed",
      };
      // Loaded on first use: views that only show calls (trace show) never load the model clients.
      const { streamModel } = await import("../models/stream.ts");
      const stream = streamModel({
        endpoint,
        system_prompt: "",
        tools: [],
        history: [userText(prompt), image],
        thinking_level: "none",
        max_tokens: maxTokens,
      }, {
        signal,
        idleTimeoutMs: DESCRIBE_IDLE_TIMEOUT_MS,
        ...(opts.fetch ? { fetch: opts.fetch } : {}),
      });
      for await (const item of stream) {
        if (item.kind === "message") {
          const m = item.message;
          if (m.type === "partial_text" && m.event_type === "delta" && m.text) yield m.text;
        } else if (item.kind === "end" && item.outcome.status !== "completed") {
          return {
            status: item.outcome.status,
            message: item.outcome.error_message ?? item.outcome.status,
          };
        }
      }
      return undefined;
    },
  };
}

const schema = z.object({
  source: imageSourceArg,
  prompt: z.string().describe("What to ask about the image (default: describe it in detail).")
    .optional(),
});
type Args = z.infer<typeof schema>;

/** The image read_image loaded, or the output explaining why not. */
async function load(
  readImage: Tool<FileToolContext>,
  source: string,
  ctx: FileToolContext,
): Promise<{ ok: true; url: string } | { ok: false; text: string }> {
  let text = "";
  let images: string[] = [];
  let status = "completed";
  for await (const ev of readImage.run({ source }, ctx)) {
    if (ev.type === "delta") text += ev.text;
    else if (ev.type === "images") images = ev.images;
    else if (ev.type === "result") status = ev.status ?? "completed";
  }
  const url = images[0];
  if (status !== "completed" || url === undefined) {
    return { ok: false, text: text || `Cannot read image "${source}".` };
  }
  return { ok: true, url };
}

/** What a request to the vision model holds of an image of `bytes` bytes: its data URL, three times. */
function inFlightBytes(bytes: number): number {
  return 3 * (4 * Math.ceil(bytes / 3) + DATA_URL_HEADER_CHARS);
}

/** The most characters of a data URL before its base64 (`data:<type>;base64,`). */
const DATA_URL_HEADER_CHARS = 64;

/**
 * `ctx` whose image claims (read_image's, made before it reads the image)
 * claim, first, what the request to the vision model will hold of that
 * image ({@linkcode inFlightBytes}, for the process's bound alone): a call
 * the process has no room for is refused before it reads anything. Claimed
 * only once read, the images of twelve subagents describing at once were
 * read and encoded, then refused, their copies left to the next full
 * collection: 347–361 MB (attack round 24 bounded R11). `inFlight`: what
 * was claimed so.
 */
function claimingInFlight(ctx: FileToolContext): { ctx: FileToolContext; inFlight: number } {
  const claim = ctx.claimImage;
  const out = { ctx, inFlight: 0 };
  if (!claim) return out;
  out.ctx = {
    ...ctx,
    claimImage: async (bytes, processOnly) => {
      const need = inFlightBytes(bytes);
      const held = await claim(need, true);
      if (held !== true) return held;
      out.inFlight += need;
      return await claim(bytes, processOnly);
    },
  };
  return out;
}

/** `image/png, 1.2 KB` of a data URL. */
function headerOf(url: string): string {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (!m) return "image";
  const b64 = m[2]!;
  const pad = b64.endsWith("==") ? 2 : b64.endsWith("=") ? 1 : 0;
  return `${m[1]}, ${formatBytes((b64.length / 4) * 3 - pad)}`;
}

function declaration(deps?: DescribeImageDeps): ToolDeclaration<Args, FileToolContext> {
  return {
    name: "describe_image",
    description:
      "Have a vision model look at an image for you (you cannot see images yourself): a file " +
      "in the workspace or an http(s) URL, PNG, JPEG, GIF or WebP up to 5 MB. Returns the " +
      "model's answer to your question about it (default: a detailed description).",
    args: schema,
    permission: "r",
    timeoutMs: 90_000,
    maxOutputLength: 16_000,
    forModel: "text-only",
    preview: filePreview("source"),
    async *run(args, ctx): AsyncGenerator<ToolEvent> {
      if (!deps) {
        yield { type: "delta", text: "describe_image needs a vision model; none is configured." };
        return yield { type: "result", status: "failed" };
      }
      // The request to the vision model holds the data URL again, as JSON text, as its encoded
      // bytes and as the runtime's copy it sends, until it is answered: claimed too, as the image
      // is, and with it, before the image is read (see `claimingInFlight`).
      const claims = claimingInFlight(ctx);
      const loaded = await load(deps.readImage, args.source, claims.ctx);
      if (!loaded.ok) {
        yield { type: "delta", text: loaded.text };
        return yield { type: "result", status: "failed" };
      }
      // What the read did not claim already (a tool that claims nothing, a file that grew).
      const short = 3 * loaded.url.length - claims.inFlight;
      const inFlight = ctx.claimImage && short > 0 ? await ctx.claimImage(short, true) : true;
      if (inFlight !== true) {
        yield {
          type: "delta",
          text: inFlight === "process" ? PROCESS_IMAGES_NOTE : RESPONSE_IMAGES_NOTE,
        };
        return yield { type: "result", status: "failed" };
      }
      const prompt = args.prompt?.trim() || DEFAULT_DESCRIBE_PROMPT;
      yield {
        type: "delta",
        text: `${headerOf(loaded.url)} — described by ${deps.describer.modelId}:\n`,
      };
      const answer = deps.describer.describe(loaded.url, prompt, ctx.signal);
      for (;;) {
        const next = await answer.next();
        if (next.done) {
          if (next.value === undefined || ctx.signal.aborted) return;
          yield {
            type: "delta",
            text: `\n[describe_image: the vision model ${deps.describer.modelId} request ended ` +
              `${next.value.status}: ${next.value.message}]`,
          };
          return yield { type: "result", status: "failed" };
        }
        yield { type: "delta", text: next.value };
      }
    },
  };
}

/** describe_image's default definition and preview (instantiated only with a vision model). */
export const describeImageTool: DefinedTool<FileToolContext> = defineTool(declaration());

/** The default describe_image definition. */
export const DESCRIBE_IMAGE_DEFINITION: ToolDefinition = describeImageTool.definition;

/** describe_image over the session's vision model and read_image, from a (possibly configured) definition. */
export function createDescribeImageTool(
  deps: DescribeImageDeps,
  definition: ToolDefinition = DESCRIBE_IMAGE_DEFINITION,
): Tool<FileToolContext> {
  return defineTool(declaration(deps)).create(definition);
}
