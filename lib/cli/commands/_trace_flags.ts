/**
 * The "show full output" flag of `trace show` and `trace follow`. It has the
 * name `run` and `chat` use (`--verbose`, `/verbose` in chat), so one word
 * means "do not collapse tool output" everywhere; the older `--full` is still
 * accepted, unlisted.
 *
 * @module
 */
import { bool, type Flag, type Parsed } from "../args.ts";

/** `--verbose`: tool outputs and multi-line arguments whole. */
export const VERBOSE_OUTPUT: Flag<boolean> = {
  name: "verbose",
  type: "boolean",
  help: "show tool outputs and multi-line arguments whole",
};

/** `--full`: the earlier name of `--verbose`, accepted but not listed. */
export const FULL_ALIAS: Flag<boolean> = {
  name: "full",
  type: "boolean",
  hidden: true,
  help: "the same as --verbose",
};

/** Whether `--verbose` (or its alias `--full`) was given. */
export function verboseOutput(p: Parsed): boolean {
  return bool(p, VERBOSE_OUTPUT.name) || bool(p, FULL_ALIAS.name);
}
