/**
 * write_file: create or wholly overwrite a file. Missing parent
 * directories are created (inside the workspace only, since the target's real
 * path was confined first); the write is atomic and keeps an overwritten
 * file's permission bits. An overwrite of a small text file reports what
 * changed: `(content unchanged)`, a unified diff, or `+X/−Y` counts.
 *
 * @module
 */
import { dirname } from "node:path";
import { z } from "zod";
import { fail, filePathArg } from "./_args.ts";
import { lineDiff, renderHunk } from "./_diff.ts";
import { readFileBounded } from "./_bounded_read.ts";
import { contentLines, plural } from "./_files.ts";
import { writeFileAtomic } from "../state/_fs.ts";
import { WRITE_FILE_DIFF_MAX_BYTES } from "./file_limits.ts";
import type { FileToolContext, ToolDefinition, ToolEvent } from "./tool.ts";
import { type DefinedTool, defineTool } from "./define.ts";
import { filePreview } from "../display/tool_preview.ts";
import { resolveWorkspacePath } from "./workspace_path.ts";
import { errorMessage } from "../protocol/errors.ts";
import { isNotFound } from "./_files.ts";

/** Previous contents larger than this get no diff (and are not read). */
export const DIFF_SOURCE_CAP_BYTES: number = WRITE_FILE_DIFF_MAX_BYTES;
/** Rendered diff lines (headers included) shown at most. */
export const MAX_DIFF_LINES = 60;
const NOTE_RESERVE = 120;
const FALLBACK_BUDGET = 16_000;

const schema = z.object({
  file_path: filePathArg,
  content: z.string().describe("The complete new content of the file."),
});

async function* runWriteFile(
  args: z.infer<typeof schema>,
  ctx: FileToolContext,
  definition: ToolDefinition,
): AsyncGenerator<ToolEvent> {
  const { file_path: p, content } = args;

  const at = await resolveWorkspacePath(p, ctx, "write");
  if (!at.ok) return yield* fail(at.message);

  let existed = false;
  let mode: number | undefined;
  let previous: string | undefined;
  try {
    const info = await Deno.stat(at.real);
    if (info.isDirectory) return yield* fail(`Cannot write "${p}": it is a directory.`);
    existed = true;
    if (info.mode !== null) mode = info.mode & 0o777;
    if (info.isFile && info.size <= DIFF_SOURCE_CAP_BYTES) {
      const read = await readFileBounded(at.real, DIFF_SOURCE_CAP_BYTES, ctx.signal)
        .catch(() => undefined);
      if (read?.ok && !read.bytes.includes(0)) previous = new TextDecoder().decode(read.bytes);
    }
  } catch (err) {
    if (!isNotFound(err)) return yield* fail(`Failed to write "${p}": ${errorMessage(err)}`);
  }
  if (ctx.signal.aborted) return yield { type: "result", status: "aborted" };

  const data = new TextEncoder().encode(content);
  try {
    await Deno.mkdir(dirname(at.real), { recursive: true });
    await writeFileAtomic(at.real, data, mode);
  } catch (err) {
    return yield* fail(`Failed to write "${p}": ${errorMessage(err)}`);
  }

  const lines = contentLines(content).length;
  const out = [
    `${existed ? "Overwrote" : "Created"} "${p}" (${plural(lines, "line")}, ${
      plural(data.length, "byte")
    }).`,
  ];
  if (existed && previous !== undefined) {
    const diff = lineDiff(previous, content);
    const summary = (plus: number, minus: number) =>
      `+${plus}/−${minus} lines vs the previous content (diff too large to show)`;
    if (diff.kind === "identical") out.push("(content unchanged)");
    else if (diff.kind === "too-large") out.push(summary(diff.plus, diff.minus));
    else {
      const rendered = diff.hunks.map(renderHunk);
      const budget =
        (definition.maxOutputLength > 0 ? definition.maxOutputLength : FALLBACK_BUDGET) -
        NOTE_RESERVE;
      const lineCount = rendered.reduce((n, h) => n + h.split("\n").length, 0);
      const chars = rendered.reduce((n, h) => n + h.length + 1, out[0]!.length);
      if (lineCount > MAX_DIFF_LINES || chars > budget) out.push(summary(diff.plus, diff.minus));
      else out.push(...rendered);
    }
  }
  yield { type: "delta", text: out.join("\n") };
}

/** write_file, declared once: schema, limits, permission, preview and implementation. */
export const writeFileTool: DefinedTool<FileToolContext> = defineTool({
  name: "write_file",
  description:
    "Create a file, or replace a file's whole content, in the workspace. Missing parent " +
    "directories are created. For a targeted change to an existing file prefer edit_file.",
  args: schema,
  permission: "rw",
  timeoutMs: 30_000,
  maxOutputLength: 16_000,
  preview: filePreview("file_path"),
  run: runWriteFile,
});

/** The default write_file definition. */
export const WRITE_FILE_DEFINITION: ToolDefinition = writeFileTool.definition;

/** Build write_file from a (possibly config-overridden) definition. */
export const createWriteFileTool: DefinedTool<FileToolContext>["create"] = writeFileTool.create;
