/**
 * edit_file: replace an exact string in an existing file. The string
 * must occur exactly once unless `replace_all` is set. The write is atomic
 * and keeps the file's permission bits; the output confirms the count and
 * shows git-style hunks of what changed (at most 5).
 *
 * Improvement over the reference: files that are not valid UTF-8 text (a NUL
 * byte, or undecodable bytes) are refused instead of being rewritten lossily,
 * and so are files over {@linkcode EDIT_FILE_MAX_BYTES} (checked before
 * reading; the read itself is bounded, see `_bounded_read.ts`).
 *
 * @module
 */
import { z } from "zod";
import { fail, filePathArg } from "./_args.ts";
import { finderOf } from "./_find_text.ts";
import { renderHunk, replacementHunks } from "./_diff.ts";
import { readFileBounded } from "./_bounded_read.ts";
import { isNotFound, plural } from "./_files.ts";
import { writeFileAtomic } from "../state/_fs.ts";
import { EDIT_FILE_MAX_BYTES, formatSize } from "./file_limits.ts";
import { missingPathHint } from "./_path_hint.ts";
import type { FileToolContext, ToolDefinition, ToolEvent } from "./tool.ts";
import { type DefinedTool, defineTool } from "./define.ts";
import { filePreview } from "../display/tool_preview.ts";
import { resolveWorkspacePath } from "./workspace_path.ts";
import { errorMessage } from "../protocol/errors.ts";

/** Hunks shown at most. */
export const MAX_HUNKS = 5;
const NOTE_RESERVE = 120;
const FALLBACK_BUDGET = 16_000;

const schema = z.object({
  file_path: filePathArg,
  old_string: z.string().describe("The exact text to replace."),
  new_string: z.string().describe("The replacement text (must differ from old_string)."),
  replace_all: z.boolean().describe("Replace every occurrence (default false).").optional(),
});

/**
 * The UTF-8 bytes of `content` (whose encoding is `contentBytes`) with the
 * first `limit` occurrences of `oldString` replaced, written in one pass into
 * one buffer of the exact size: no per-occurrence array or string is kept,
 * so millions of replacements cost the result's size and no more.
 */
function withReplacements(
  content: string,
  contentBytes: Uint8Array,
  oldString: string,
  newString: string,
  limit: number,
  signal: AbortSignal,
): Uint8Array {
  const enc = new TextEncoder();
  const newBytes = enc.encode(newString);
  const delta = newBytes.length - enc.encode(oldString).length;
  const out = new Uint8Array(contentBytes.length + limit * delta);
  let pos = 0;
  let prev = 0;
  let n = 0;
  const find = finderOf(content, oldString, signal);
  for (let at = find.next(0); at !== -1 && n < limit; n++) {
    pos += enc.encodeInto(content.slice(prev, at), out.subarray(pos)).written;
    out.set(newBytes, pos);
    pos += newBytes.length;
    prev = at + oldString.length;
    at = find.next(prev);
  }
  pos += enc.encodeInto(content.slice(prev), out.subarray(pos)).written;
  if (pos !== out.length) throw new Error("edit_file: the edited text has an unexpected size");
  return out;
}

/**
 * The size in bytes of a file of `size` bytes with `n` occurrences of
 * `oldString` replaced by `newString`: the result is bounded too, and
 * replace_all of a short string by a long one multiplies the size. In bytes:
 * `€` is one character of three (a 4 MiB file became 48 MiB, attack round
 * 20 bounded #1).
 */
function editedBytes(size: number, n: number, oldString: string, newString: string): number {
  const enc = new TextEncoder();
  return size + n * (enc.encode(newString).length - enc.encode(oldString).length);
}

function countOccurrences(text: string, needle: string, signal: AbortSignal): number {
  const find = finderOf(text, needle, signal);
  let n = 0;
  for (let at = find.next(0); at !== -1; at = find.next(at + needle.length)) n++;
  return n;
}

async function* runEditFile(
  args: z.infer<typeof schema>,
  ctx: FileToolContext,
  definition: ToolDefinition,
): AsyncGenerator<ToolEvent> {
  // Long because: one edit in its order (resolve, read, match, write, then the diff within the
  // output budget); the steps share the content and the path.
  const { file_path: p, old_string: oldString, new_string: newString } = args;
  const replaceAll = args.replace_all === true;
  if (oldString.length === 0) {
    return yield* fail(
      "old_string must not be empty — edit_file replaces existing text. To create a file or rewrite it wholesale, use write_file.",
    );
  }
  if (oldString === newString) {
    return yield* fail(
      "old_string and new_string are identical — nothing to change. Make new_string the desired replacement text.",
    );
  }

  const at = await resolveWorkspacePath(p, ctx, "edit");
  if (!at.ok) return yield* fail(at.message);
  let content: string;
  let bytes: Uint8Array;
  let mode: number | undefined;
  let held = 0;
  try {
    const info = await Deno.stat(at.real);
    if (info.isDirectory) return yield* fail(`Cannot edit "${p}": it is a directory.`);
    if (info.mode !== null) mode = info.mode & 0o777;
    // The text and the edited text, about its size: waits while other edits hold the tool host's memory.
    held = Math.min(info.size, EDIT_FILE_MAX_BYTES) * 2;
    if (ctx.holdMemory && !(await ctx.holdMemory(held))) {
      return yield { type: "result", status: "aborted" };
    }
    const read = await readFileBounded(at.real, EDIT_FILE_MAX_BYTES, ctx.signal);
    if (!read.ok) {
      if (read.reason === "aborted") return yield { type: "result", status: "aborted" };
      if (read.reason === "not-a-file") {
        return yield* fail(
          `Cannot edit "${p}": it is not a regular file (a FIFO, device or socket); edit_file only edits regular files.`,
        );
      }
      return yield* fail(
        `Cannot edit "${p}": it is ${read.grew ? "more than " : ""}${
          formatSize(read.size)
        }; edit_file reads files up to ${formatSize(EDIT_FILE_MAX_BYTES)}. ` +
          "Change it with a command instead (sed, a script), or read parts of it with read_file.",
      );
    }
    bytes = read.bytes;
    if (bytes.includes(0)) {
      return yield* fail(
        `"${p}" looks like a binary file (contains NUL bytes); edit_file only edits text files.`,
      );
    }
    try {
      content = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      return yield* fail(`"${p}" is not valid UTF-8 text; edit_file only edits UTF-8 text files.`);
    }
  } catch (err) {
    if (ctx.signal.aborted) return yield { type: "result", status: "aborted" };
    if (!isNotFound(err)) return yield* fail(`Failed to read "${p}": ${errorMessage(err)}`);
    const hint = await missingPathHint(at.real, at.rootReal);
    return yield* fail(
      `File not found: "${p}". edit_file only edits existing files — check the path, or use write_file to create it.${hint}`,
    );
  }
  if (ctx.signal.aborted) return yield { type: "result", status: "aborted" };

  const count = countOccurrences(content, oldString, ctx.signal);
  if (count === 0) {
    const crlf = content.includes("\r\n")
      ? " Note: the file uses CRLF (\\r\\n) line endings — a multi-line old_string must include the \\r characters."
      : "";
    return yield* fail(
      `old_string not found in "${p}". Make sure it matches the file content exactly, including whitespace and indentation.${crlf}`,
    );
  }
  if (count > 1 && !replaceAll) {
    return yield* fail(
      `old_string occurs ${count} times in "${p}". Add surrounding context to make it unique, or set replace_all to true to replace every occurrence.`,
    );
  }
  const grown = editedBytes(bytes.length, replaceAll ? count : 1, oldString, newString);
  if (grown > EDIT_FILE_MAX_BYTES) {
    return yield* fail(
      `Cannot edit "${p}": the edited text would be ${
        formatSize(grown)
      } or more; edit_file writes files up to ${formatSize(EDIT_FILE_MAX_BYTES)}. ` +
        "Make the change with a command instead (sed, a script).",
    );
  }
  // A small file grown by replace_all holds more than its size asked for.
  if (
    ctx.holdMemory && bytes.length + grown > held && !(await ctx.holdMemory(bytes.length + grown))
  ) {
    return yield { type: "result", status: "aborted" };
  }
  const updated = withReplacements(
    content,
    bytes,
    oldString,
    newString,
    replaceAll ? count : 1,
    ctx.signal,
  );
  try {
    await writeFileAtomic(at.real, updated, mode);
  } catch (err) {
    return yield* fail(`Failed to write "${p}": ${errorMessage(err)}`);
  }

  const replacedCount = replaceAll ? count : 1;
  yield {
    type: "delta",
    text: editReport(p, content, args, replacedCount, definition.maxOutputLength),
  };
}

/**
 * The output of an edit of `path`: the count, then the diff hunks of the
 * replacements that fit in the output budget, and how many were left out.
 */
function editReport(
  p: string,
  content: string,
  args: z.infer<typeof schema>,
  replacedCount: number,
  maxOutputLength: number,
): string {
  const { old_string: oldString, new_string: newString } = args;
  const replaceAll = args.replace_all === true;
  const out = [`Replaced ${plural(replacedCount, "occurrence")} in "${p}".`];
  const budget = (maxOutputLength > 0 ? maxOutputLength : FALLBACK_BUDGET) - NOTE_RESERVE;
  let used = out[0]!.length;
  let shown = 0;
  for (
    const { hunk, sites } of replacementHunks(content, oldString, newString, replaceAll, MAX_HUNKS)
  ) {
    const text = renderHunk(hunk);
    if (used + 1 + text.length > budget) break;
    out.push(text);
    used += 1 + text.length;
    shown += sites;
  }
  if (shown === 0) {
    out.push("(no diff shown: the replacements are too many or too close together to list)");
  } else if (replacedCount > shown) {
    out.push(
      `…and ${replacedCount - shown} more ${
        replacedCount - shown === 1 ? "replacement" : "replacements"
      }`,
    );
  }
  return out.join("\n");
}

/** edit_file, declared once: schema, limits, permission, preview and implementation. */
export const editFileTool: DefinedTool<FileToolContext> = defineTool({
  name: "edit_file",
  description:
    "Replace an exact piece of text in an existing workspace file. `old_string` must match the " +
    "file exactly (whitespace and indentation included) and occur once, unless `replace_all` is true.",
  args: schema,
  permission: "rw",
  timeoutMs: 30_000,
  maxOutputLength: 16_000,
  preview: filePreview("file_path"),
  run: runEditFile,
});

/** The default edit_file definition. */
export const EDIT_FILE_DEFINITION: ToolDefinition = editFileTool.definition;

/** Build edit_file from a (possibly config-overridden) definition. */
export const createEditFileTool: DefinedTool<FileToolContext>["create"] = editFileTool.create;
