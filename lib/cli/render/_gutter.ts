/**
 * How a tool call's output sits under its call line: each line behind one
 * dim gutter (`  │ `), no per-line call tags; a `[#n] name ->` header
 * line only when the output does not follow its own call line (another
 * call's output, or text, came in between). The outputs of the file tools
 * (their git-style hunks) are coloured as diffs on a colour terminal:
 * `+` lines green, `-` lines red, `@@` headers cyan.
 *
 * @module
 */
import { paint, type Palette } from "../../display/palette.ts";

/** The gutter in front of each output line. */
export const GUTTER = "  │ ";

/** Tools whose outputs hold diff hunks. */
const DIFF_TOOLS: ReadonlySet<string> = new Set(["edit_file", "write_file"]);

/** Whether the output of `tool` is coloured as a diff. */
export function isDiffTool(tool: string | undefined): boolean {
  return tool !== undefined && DIFF_TOOLS.has(tool);
}

/** One complete output line (terminal-safe already) behind the gutter, coloured as a diff line when `diff`. */
export function gutterLine(line: string, p: Palette, diff: boolean): string {
  const gutter = paint(p.dim, GUTTER, p);
  if (!diff) return `${gutter}${line}`;
  if (line.startsWith("@@")) return `${gutter}${paint(p.cyan, line, p)}`;
  if (line.startsWith("+")) return `${gutter}${paint(p.green, line, p)}`;
  if (line.startsWith("-")) return `${gutter}${paint(p.red, line, p)}`;
  return `${gutter}${line}`;
}
