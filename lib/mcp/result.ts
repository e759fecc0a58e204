/**
 * How an MCP `tools/call` result becomes a tool output, the same way
 * PenguinHarness renders it so traces read alike:
 *
 * - text blocks are joined by newlines;
 * - images become data URLs attached to the output, when their `mimeType` is
 *   `image/<subtype>` (lower-case letters, digits, `.`, `+`, `-`, at most 40)
 *   and holds no secret (`mask` leaves it as it is): the data URL is not
 *   masked as text is, so a server (or a model steering one) could otherwise
 *   carry a secret to the trace and the provider in it; another image is
 *   refused with `[image refused: its mimeType is not image/<subtype>]`, and
 *   one whose base64 `data` holds a secret (masking it would corrupt the
 *   image) with `[image refused: its data holds a secret]`, one whose data
 *   is not standard base64 (whitespace taken out) with
 *   `[image refused: its data is not base64]`;
 * - audio becomes `[audio content: <mime>]`;
 * - a resource link becomes `[resource: <uri>] <description>`;
 * - an embedded text resource becomes its text, a binary one
 *   `[resource: <uri> (binary)]`;
 * - any other block becomes `[unsupported content type: <type>]`;
 * - with no text at all, `structuredContent` is shown as indented JSON;
 * - `isError` makes the call fail, with
 *   `[tool reported an error with no message]` when it says nothing.
 *
 * @module
 */

/** A rendered result. */
export interface RenderedResult {
  /** The output text. */
  text: string;
  /** Images as data URLs. */
  images: string[];
  /** The server said the call failed. */
  isError: boolean;
}

type Block = Record<string, unknown> & { type?: unknown };

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** The image types an image block may name (its data URL's media type). */
const IMAGE_MIME = /^image\/[a-z0-9.+-]{1,40}$/;

/** The note of an image refused for its `mimeType`. */
export const REFUSED_IMAGE_NOTE = "[image refused: its mimeType is not image/<subtype>]";

/** Standard base64 (no line breaks: they are taken out first). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The note of an image whose `data` is not base64. */
export const NOT_BASE64_NOTE = "[image refused: its data is not base64]";

/** The note of an image refused because its data spells a secret. */
export const SECRET_IMAGE_NOTE = "[image refused: its data holds a secret]";

function renderBlock(
  block: Block,
  images: string[],
  mask: (text: string) => string,
): string | undefined {
  switch (block.type) {
    case "text":
      return str(block.text) ?? "";
    case "image": {
      const given = str(block.data);
      const mime = str(block.mimeType) ?? "image/png";
      if (given === undefined) return undefined;
      if (!IMAGE_MIME.test(mime) || mask(mime) !== mime) return REFUSED_IMAGE_NOTE;
      // The data as the model gets it, checked as such: base64 broken by whitespace hid a secret
      // from the check, and a decoder reads through it (attack round 23 secrets B8).
      const data = given.replace(/[\t\n\f\r ]+/g, "");
      if (!BASE64.test(data)) return NOT_BASE64_NOTE;
      if (mask(data) !== data) return SECRET_IMAGE_NOTE;
      images.push(`data:${mime};base64,${data}`);
      return undefined;
    }
    case "audio":
      return `[audio content: ${str(block.mimeType) ?? "unknown"}]`;
    case "resource_link": {
      const desc = str(block.description) ?? str(block.title) ?? str(block.name) ?? "";
      return `[resource: ${str(block.uri) ?? "?"}]${desc ? ` ${desc}` : ""}`;
    }
    case "resource": {
      const res = (block.resource ?? {}) as Block;
      const text = str(res.text);
      return text ?? `[resource: ${str(res.uri) ?? "?"} (binary)]`;
    }
    default:
      return `[unsupported content type: ${String(block.type)}]`;
  }
}

/**
 * Render a `tools/call` result (already received; `result` is the raw object).
 * `mask` is the session's secret masking (an image type it changes is refused).
 */
export function renderCallResult(
  result: unknown,
  mask: (text: string) => string = (text) => text,
): RenderedResult {
  const r = (typeof result === "object" && result !== null ? result : {}) as Block;
  const images: string[] = [];
  const content = Array.isArray(r.content) ? (r.content as Block[]) : [];
  const parts = content.map((b) => renderBlock(b ?? {}, images, mask)).filter((t) =>
    t !== undefined
  );
  let text = parts.join("\n");
  if (text === "" && r.structuredContent !== undefined) {
    text = JSON.stringify(r.structuredContent, null, 2);
  }
  // Older servers answer with `toolResult` instead of `content`.
  if (text === "" && content.length === 0 && r.toolResult !== undefined) {
    text = typeof r.toolResult === "string" ? r.toolResult : JSON.stringify(r.toolResult, null, 2);
  }
  const isError = r.isError === true;
  if (isError && text === "") text = "[tool reported an error with no message]";
  return { text, images, isError };
}
