/**
 * What a tool call will do, shown under its call line before the approval
 * question: `exec_command` its full command (and its directory when it is
 * not the workspace root); `write_file` the content (the first
 * {@linkcode WRITE_LINES_SHOWN} lines, then a count of the rest);
 * `edit_file` a unified diff (red/green on a colour terminal). Everything
 * shown is the model's text: made terminal-safe, with the session's secrets
 * and secret-looking values (`password = …`, API keys, tokens) masked.
 *
 * The edit's context lines come from the file as it is now, read only when
 * it resolves inside the workspace; otherwise the diff shows the replaced
 * text alone.
 *
 * @module
 */
import { isAbsolute, join, relative, resolve } from "node:path";
import type { ToolCallMessage } from "../protocol/types.ts";
import { paletteFor } from "../display/palette.ts";
import { safeText } from "../display/terminal_text.ts";
import { redactSecrets } from "../inspect/redact.ts";
import { renderHunk, replacementHunks } from "../tools/_diff.ts";
import { contentLines } from "../tools/_files.ts";
import { readRegularNow } from "../sandbox/_look.ts";

/** Lines of a new file's content shown before the count of the rest. */
export const WRITE_LINES_SHOWN = 40;
/** Hunks of an edit shown at most. */
const EDIT_HUNKS = 5;
/** Files larger than this are not read for an edit's context. */
const CONTEXT_READ_MAX = 1 << 20;
/** Characters of one shown line at most. */
const LINE_MAX = 400;

/** What the display needs of the session. */
export interface DisplayContext {
  /** The workspace root (real path). */
  workspace: string;
  /** Mask the session's known secrets (vault values, API keys). */
  mask(text: string): string;
  /** Colour diffs. */
  color: boolean;
}

/** `key = value` / `key: value` assignments whose key names a secret. */
const SECRET_ASSIGNMENT =
  /((?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)[A-Za-z0-9_.-]*["']?\s*[:=]\s*["']?)([^\s"',;]+)/gi;

/** `text` with secrets masked: the session's own, secret-shaped ones, and secret assignments. */
export function maskShown(text: string, mask: (t: string) => string): string {
  return redactSecrets(mask(text)).replace(SECRET_ASSIGNMENT, (_m, key: string) => `${key}****`);
}

function argsOf(call: ToolCallMessage): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(call.arguments);
    return v !== null && typeof v === "object" && !Array.isArray(v)
      ? v as Record<string, unknown>
      : {};
  } catch {
    return {};
  }
}

function clip(line: string): string {
  return line.length > LINE_MAX ? `${line.slice(0, LINE_MAX)}… [line cut]` : line;
}

/** Shown lines of model text: masked, terminal-safe, each under `indent`. */
function shown(text: string, ctx: DisplayContext): string[] {
  return contentLines(safeText(maskShown(text, ctx.mask))).map(clip);
}

function commandLines(args: Record<string, unknown>, ctx: DisplayContext): string[] {
  const cmd = typeof args.cmd === "string" ? args.cmd : "";
  const lines = shown(cmd, ctx).map((l, i) => (i === 0 ? `  $ ${l}` : `    ${l}`));
  const dir = typeof args.workdir === "string" ? args.workdir : "";
  if (dir !== "" && resolve(ctx.workspace, dir) !== resolve(ctx.workspace)) {
    lines.push(`  in ${shown(dir, ctx)[0] ?? ""}`);
  }
  return lines;
}

function writeLines(args: Record<string, unknown>, ctx: DisplayContext): string[] {
  const content = typeof args.content === "string" ? args.content : "";
  const all = shown(content, ctx);
  const p = paletteFor(ctx.color);
  const out = [`  ${all.length} line${all.length === 1 ? "" : "s"} to write:`];
  for (const l of all.slice(0, WRITE_LINES_SHOWN)) out.push(`  ${p.green}+ ${l}${p.reset}`);
  const rest = all.length - WRITE_LINES_SHOWN;
  if (rest > 0) out.push(`  … and ${rest} more line${rest === 1 ? "" : "s"}`);
  return out;
}

/**
 * The file's text when `path` resolves inside the workspace and is small text (at most
 * `CONTEXT_READ_MAX` bytes, read no further); else null.
 */
async function currentText(path: string, workspace: string): Promise<string | null> {
  try {
    const root = await Deno.realPath(workspace);
    const real = await Deno.realPath(isAbsolute(path) ? path : join(workspace, path));
    const rel = relative(root, real);
    if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return null;
    // Opened without blocking, then measured and read with a bound, as opened: a command may swap
    // a huge (sparse) file or a FIFO in after any look at the path (attack round 28 h03: a whole
    // read took penguin to 690 MB; h04b: the open of a FIFO hung the approval for good).
    const bytes = readRegularNow(real, CONTEXT_READ_MAX);
    if (!(bytes instanceof Uint8Array)) return null;
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

function paintDiff(line: string, ctx: DisplayContext): string {
  const p = paletteFor(ctx.color);
  if (line.startsWith("@@")) return `  ${p.cyan}${line}${p.reset}`;
  if (line.startsWith("+")) return `  ${p.green}${line}${p.reset}`;
  if (line.startsWith("-")) return `  ${p.red}${line}${p.reset}`;
  return `  ${line}`;
}

async function editLines(args: Record<string, unknown>, ctx: DisplayContext): Promise<string[]> {
  const oldString = typeof args.old_string === "string" ? args.old_string : "";
  const newString = typeof args.new_string === "string" ? args.new_string : "";
  const path = typeof args.file_path === "string" ? args.file_path : "";
  const text = await currentText(path, ctx.workspace);
  let diff: string[];
  if (text !== null && oldString !== "" && text.includes(oldString)) {
    const hunks = replacementHunks(
      text,
      oldString,
      newString,
      args.replace_all === true,
      EDIT_HUNKS,
    );
    diff = hunks.flatMap(({ hunk }) => renderHunk(hunk).split("\n"));
  } else {
    const note = text === null ? "" : " (the text to replace is not in the file now)";
    diff = [
      `@@ replaces${note} @@`,
      ...contentLines(oldString).map((l) => `-${l}`),
      ...contentLines(newString).map((l) => `+${l}`),
    ];
  }
  // Masked and made safe as one text, so a secret split over lines is still found.
  return shown(diff.join("\n"), ctx).map((l) => paintDiff(l, ctx));
}

/**
 * The lines shown under `call`'s call line before it is put to the user
 * (no line ends); empty for tools with nothing more to show.
 */
export async function approvalDetails(
  call: ToolCallMessage,
  ctx: DisplayContext,
): Promise<string[]> {
  const args = argsOf(call);
  switch (call.name) {
    case "exec_command":
      return commandLines(args, ctx);
    case "write_file":
      return writeLines(args, ctx);
    case "edit_file":
      return await editLines(args, ctx);
    default:
      return [];
  }
}
