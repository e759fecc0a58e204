/**
 * How an MCP `tools/call` result becomes a tool output, the same way
 * PenguinHarness renders it so traces read alike:
 *
 * - text blocks are joined by newlines;
 * - images become data URLs attached to the output;
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

function renderBlock(block: Block, images: string[]): string | undefined {
  switch (block.type) {
    case "text":
      return str(block.text) ?? "";
    case "image": {
      const data = str(block.data);
      const mime = str(block.mimeType) ?? "image/png";
      if (data !== undefined) images.push(`data:${mime};base64,${data}`);
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

/** Render a `tools/call` result (already received; `result` is the raw object). */
export function renderCallResult(result: unknown): RenderedResult {
  const r = (typeof result === "object" && result !== null ? result : {}) as Block;
  const images: string[] = [];
  const content = Array.isArray(r.content) ? (r.content as Block[]) : [];
  const parts = content.map((b) => renderBlock(b ?? {}, images)).filter((t) => t !== undefined);
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
