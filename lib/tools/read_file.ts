/**
 * read_file: a text file as a numbered window, `cat -n` style, so the
 * model can quote exact lines back to edit_file.
 *
 * The file is scanned through a handle in 256 KiB chunks, never loaded whole,
 * up to an 8 MiB scan cap. The rendered window is budgeted below the tool's
 * own `maxOutputLength` so the continuation note always survives truncation.
 *
 * @module
 */
import { z } from "zod";
import { countArg, fail, filePathArg } from "./_args.ts";
import { safeCut } from "./_archive.ts";
import { isNotFound, plural } from "./_files.ts";
import { READ_FILE_SCAN_BYTES } from "./file_limits.ts";
import { missingPathHint } from "./_path_hint.ts";
import type { FileToolContext, ToolDefinition, ToolEvent } from "./tool.ts";
import { type DefinedTool, defineTool } from "./define.ts";
import { filePreview } from "../display/tool_preview.ts";
import { resolveWorkspacePath } from "./workspace_path.ts";
import { concatBytes } from "../protocol/bytes.ts";
import { errorMessage } from "../protocol/errors.ts";

/** Lines returned when `limit` is not given. */
export const DEFAULT_READ_LIMIT = 2000;
/** Characters kept of one line. */
export const MAX_LINE_LENGTH = 2000;
/** Bytes scanned per call at most. */
export const SCAN_CAP_BYTES: number = READ_FILE_SCAN_BYTES;
const CHUNK_BYTES = 256 * 1024;
const LINE_BYTE_CAP = MAX_LINE_LENGTH * 4; // >= MAX_LINE_LENGTH chars of any UTF-8
const NOTE_RESERVE = 256;
const FALLBACK_BUDGET = 64_000;

const schema = z.object({
  file_path: filePathArg,
  offset: countArg(1, false, "1-based line to start at (default 1)."),
  limit: countArg(
    DEFAULT_READ_LIMIT,
    true,
    `Maximum number of lines to return (default ${DEFAULT_READ_LIMIT}).`,
  ),
});

/** `String(n).padStart(6) + "\t" + content`, the content cut at 2000 chars. */
export function numberedLine(n: number, content: string): string {
  const cut = content.length > MAX_LINE_LENGTH
    ? `${content.slice(0, safeCut(content, MAX_LINE_LENGTH))}… [line truncated]`
    : content;
  return `${String(n).padStart(6)}\t${cut}`;
}

interface Scan {
  /** The window's lines, up to the first whose numbered row passes the output budget. */
  lines: string[];
  total: number;
  totalKnown: boolean;
  crlf: boolean;
  binary: boolean;
  capBeforeWindow: boolean;
  aborted: boolean;
}

async function scan(
  path: string,
  offset: number,
  limit: number,
  signal: AbortSignal,
  budget: number,
): Promise<Scan> {
  // Long because: one read loop over the file that counts lines and keeps the requested window; its
  // counters stay locals of the loop.
  const end = offset + limit - 1;
  const out: Scan = {
    lines: [],
    total: 0,
    totalKnown: false,
    crlf: false,
    binary: false,
    capBeforeWindow: false,
    aborted: false,
  };
  const decoder = new TextDecoder();
  let done = 0; // completed lines
  let hasBytes = false; // the open line has content
  let parts: Uint8Array[] = [];
  let kept = 0;
  let scanned = 0;
  let prev = -1;
  // The rows kept so far, as the output will count them: past the budget no line is kept (only
  // counted), so a call holds about its output whatever its `limit` (8 MiB of empty lines made
  // 8 million strings, attack round 19 bounded #1).
  let rowsChars = 0;
  const inWindow = () => done + 1 >= offset && done + 1 <= end && rowsChars <= budget + 1;
  const keep = (buf: Uint8Array, from: number, to: number) => {
    if (kept >= LINE_BYTE_CAP) return;
    const take = Math.min(LINE_BYTE_CAP - kept, to - from);
    parts.push(buf.slice(from, from + take));
    kept += take;
  };
  const finish = () => {
    if (inWindow()) {
      let text = decoder.decode(concatBytes(parts));
      if (text.endsWith("\r")) text = text.slice(0, -1);
      out.lines.push(text);
      rowsChars += numberedLine(done + 1, text).length + 1;
    }
    done++;
    parts = [];
    kept = 0;
    hasBytes = false;
  };
  const file = await Deno.open(path, { read: true });
  try {
    // Swapped for a FIFO or device after the stat: nothing is read from it.
    if (!(await file.stat()).isFile) return { ...out, binary: true };
    const buf = new Uint8Array(CHUNK_BYTES);
    for (;;) {
      if (signal.aborted) return { ...out, aborted: true };
      const want = Math.min(CHUNK_BYTES, SCAN_CAP_BYTES - scanned);
      if (want <= 0) {
        out.capBeforeWindow = out.lines.length === 0;
        out.total = done + (hasBytes ? 1 : 0);
        return out;
      }
      const n = await file.read(buf.subarray(0, want));
      if (n === null || n === 0) {
        if (hasBytes) finish();
        out.total = done;
        out.totalKnown = true;
        return out;
      }
      scanned += n;
      let from = 0;
      for (let i = 0; i < n; i++) {
        const b = buf[i]!;
        if (b === 0) return { ...out, binary: true };
        if (b === 0x0a) {
          if (prev === 0x0d) out.crlf = true;
          if (i > from) {
            hasBytes = true;
            if (inWindow()) keep(buf, from, i);
          }
          finish();
          from = i + 1;
        }
        prev = b;
      }
      if (from < n) {
        hasBytes = true;
        if (inWindow()) keep(buf, from, n);
      }
    }
  } finally {
    file.close();
  }
}

async function* runReadFile(
  args: z.infer<typeof schema>,
  ctx: FileToolContext,
  definition: ToolDefinition,
): AsyncGenerator<ToolEvent> {
  // Long because: the read in its order (resolve and stat the path, scan, cut the lines to the
  // output budget), each step on shared locals.
  const { file_path: p, limit } = args;
  const offset = Math.max(1, args.offset);

  const at = await resolveWorkspacePath(p, ctx, "read");
  if (!at.ok) return yield* fail(at.message);
  let size: number;
  try {
    const info = await Deno.stat(at.real);
    if (info.isDirectory) {
      return yield* fail(
        `Cannot read "${p}": it is a directory. Pass the path of a file inside it.`,
      );
    }
    if (!info.isFile) {
      return yield* fail(
        `Cannot read "${p}": it is not a regular file (a FIFO, device or socket); read_file reads regular files.`,
      );
    }
    size = info.size;
  } catch (err) {
    if (!isNotFound(err)) return yield* fail(`Failed to read "${p}": ${errorMessage(err)}`);
    const hint = await missingPathHint(at.real, at.rootReal);
    return yield* fail(
      `File not found: "${p}". Absolute paths inside the workspace are supported; relative paths resolve against the workspace (${ctx.workspace}).${hint}`,
    );
  }
  if (ctx.signal.aborted) return yield { type: "result", status: "aborted" };
  if (size === 0) return yield { type: "delta", text: `"${p}" is an empty file (0 lines).` };

  const max = definition.maxOutputLength > 0 ? definition.maxOutputLength : FALLBACK_BUDGET;
  const budget = Math.max(1, max - NOTE_RESERVE);
  let s: Scan;
  try {
    s = await scan(at.real, offset, limit, ctx.signal, budget);
  } catch (err) {
    return yield* fail(`Failed to read "${p}": ${errorMessage(err)}`);
  }
  if (s.aborted) return yield { type: "result", status: "aborted" };
  if (s.binary) {
    return yield* fail(
      `"${p}" looks like a binary file (contains NUL bytes). Use shell commands to inspect it.`,
    );
  }
  if (s.capBeforeWindow) {
    return yield* fail(
      `Stopped after scanning ${
        SCAN_CAP_BYTES / (1024 * 1024)
      } MB of "${p}" without reaching the requested window ` +
        `(scanned ${
          plural(s.total, "line")
        }). The offset is too deep or the file has extremely long lines — ` +
        `use shell commands (e.g. sed -n '${offset},${offset + limit - 1}p') for this file.`,
    );
  }
  if (s.totalKnown && offset > s.total) {
    return yield* fail(
      `Offset ${offset} is past the end of "${p}" (${plural(s.total, "line")} total).`,
    );
  }

  const rows: string[] = [];
  let used = 0;
  let last = offset - 1;
  let trimmed = false;
  for (let i = 0; i < s.lines.length; i++) {
    const row = numberedLine(offset + i, s.lines[i]!);
    const cost = row.length + (rows.length > 0 ? 1 : 0);
    if (used + cost > budget) {
      if (rows.length === 0) {
        rows.push(row.slice(0, budget));
        last = offset + i;
      }
      trimmed = true;
      break;
    }
    used += cost;
    rows.push(row);
    last = offset + i;
  }
  if (s.crlf) rows.push("(file uses CRLF line endings)");
  if (trimmed || !s.totalKnown || last < s.total) {
    const total = s.totalKnown
      ? `file has ${s.total} lines total`
      : `file has more than ${s.total} lines`;
    rows.push(
      `[${total}; showing ${offset}-${last}${
        trimmed ? " (output limit reached)" : ""
      } — call again with offset to continue]`,
    );
  }
  yield { type: "delta", text: rows.join("\n") };
}

/** read_file, declared once: schema, limits, permission, preview and implementation. */
export const readFileTool: DefinedTool<FileToolContext> = defineTool({
  name: "read_file",
  description: "Read a text file from the workspace. Lines come back numbered (`<n>\\t<line>`); " +
    "use `offset` and `limit` to page through long files. Relative paths resolve against the workspace; " +
    "absolute paths must lie inside the workspace, the session scratchpad or the agent's skills directory.",
  args: schema,
  permission: "r",
  timeoutMs: 30_000,
  maxOutputLength: 64_000,
  preview: filePreview("file_path"),
  run: runReadFile,
});

/** The default read_file definition. */
export const READ_FILE_DEFINITION: ToolDefinition = readFileTool.definition;

/** Build read_file from a (possibly config-overridden) definition. */
export const createReadFileTool: DefinedTool<FileToolContext>["create"] = readFileTool.create;
