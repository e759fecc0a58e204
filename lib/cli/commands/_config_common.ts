/**
 * Helpers shared by the `config …` and `models …` commands: data-root and
 * project resolution, the model-pair flags, masking and table layout.
 *
 * @module
 */
import { PenguinError } from "../../protocol/errors.ts";
import { DEFAULT_PROJECT_ID, validateProjectId } from "../../state/ids.ts";
import { projectConfigPath } from "../../state/paths.ts";
import type { ModelRef } from "../../state/project_config.ts";
import { resolveDataRoot } from "../../state/root.ts";
import { bool, type Flag, flagHelp, type Parsed, str } from "../args.ts";
import { MODEL_ID, PROJECT_ID, PROVIDER } from "./_common_flags.ts";
import type { CommandContext } from "../command.ts";
import { safeText } from "../../display/terminal_text.ts";

/** Mask a secret for display: `-` when empty, `***` up to 12 chars, else `****` + its last 4. */
export function maskSecret(secret: string | undefined): string {
  if (secret === undefined || secret === "") return "-";
  if (secret.length <= 12) return "***";
  return `****${secret.slice(-4)}`;
}

/** Column-aligned rows (two spaces between columns, no trailing blanks). */
export function formatTable(cells: string[][]): string {
  // Cells come from files others write (a skill's SKILL.md, an imported schedule, an MCP
  // server's tool names): no escape sequence of theirs reaches the terminal.
  const rows = cells.map((r) => r.map((c) => safeText(c)));
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n") +
    "\n";
}

/** Column-aligned rows, each line prefixed with `* ` when `marked[i]` (the header never is). */
export function formatMarkedTable(header: string[], rows: string[][], marked: boolean[]): string {
  const lines = formatTable([header, ...rows]).split("\n");
  return lines.map((l, i) => (l === "" ? l : `${i > 0 && marked[i - 1] ? "* " : "  "}${l}`)).join(
    "\n",
  );
}

/** `provider=P, model_id=M`, or `(not set)`. */
export function pairText(ref: ModelRef | undefined): string {
  return ref ? `provider=${ref.provider}, model_id=${ref.model_id}` : "(not set)";
}

/** Data root and project config path of a command invocation (`--root`, `--project-id`). */
export function projectTarget(
  ctx: CommandContext,
  p: Parsed,
): { root: string; projectId: string; path: string } {
  const root = resolveDataRoot({ root: ctx.root });
  const projectId = validateProjectId(str(p, "project-id") ?? DEFAULT_PROJECT_ID);
  return { root, projectId, path: projectConfigPath({ root, projectId }) };
}

/** Read the `--provider`/`--model-id` pair: both required, always together, never inferred. */
export function pairFlags(command: string, p: Parsed): ModelRef {
  const provider = str(p, "provider");
  const model_id = str(p, "model-id");
  if (!provider && !model_id) {
    throw new PenguinError("usage", `${command}: --provider and --model-id are required`);
  }
  if (!provider || !model_id) {
    throw new PenguinError(
      "usage",
      `${command}: --model-id and --provider must be given together`,
    );
  }
  return { provider, model_id };
}

/** Flags of the commands that take a model pair. */
export const PAIR_FLAGS: readonly Flag<unknown>[] = [
  { ...PROVIDER, help: "provider group, e.g. deepseek (always together with --model-id)" },
  { ...MODEL_ID, help: "model id (always together with --provider)" },
  PROJECT_ID,
];

/** Help lines for {@linkcode PAIR_FLAGS}. */
export const PAIR_FLAG_HELP = flagHelp(PAIR_FLAGS, 23);

/** A string flag that must be present (`allowEmpty`: `""` counts as present). */
export function requiredFlag(cmd: string, p: Parsed, name: string, allowEmpty = false): string {
  const v = str(p, name);
  if (v === undefined || (!allowEmpty && v === "")) {
    throw new PenguinError("usage", `${cmd}: --${name} is required`);
  }
  return v;
}

/** A `--x` / `--no-x` pair: true, false, or undefined when neither is given. */
export function exclusiveBool(
  cmd: string,
  p: Parsed,
  on: string,
  off: string,
): boolean | undefined {
  if (bool(p, on) && bool(p, off)) {
    throw new PenguinError("usage", `${cmd}: --${on} and --${off} exclude each other`);
  }
  return bool(p, on) ? true : bool(p, off) ? false : undefined;
}

/** Print `text` and succeed (for `--help`). */
export function printHelp(ctx: CommandContext, text: string): number {
  ctx.io.out(text);
  return 0;
}
