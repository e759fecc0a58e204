/**
 * The factory command-policy rules: JS regex sources that
 * veto obviously destructive shell commands before any approval prompt.
 * A guardrail only: commands computed at run time are out of scope.
 *
 * The tools layer tests each rule against the whitespace-collapsed command
 * and, when different, the same text with `\x`→`x` and quotes removed, so
 * `"rm" -rf x` and `sh -c 'rm -rf /'` are caught by the plain patterns here.
 *
 * @module
 */

/** One command-policy rule as stored in `[[command_policy.rules]]`. */
export interface CommandPolicyRule {
  /** Rule name, shown when a command is refused. */
  name: string;
  /** JS regular expression source (no flags). */
  pattern: string;
  /** What the rule guards against. */
  description?: string;
  /** `false` disables this rule; absent means on. */
  enabled?: boolean;
}

/**
 * Start of a command word: line start or a shell separator, then an optional
 * directory prefix, so `sudo rm`, `env rm`, `/bin/rm` and `(rm` all match.
 * The prefix holds no `(`: each start then scans only its own word, so a
 * run of `(((…` costs linear, not quadratic, time.
 */
const CMD = String.raw`(?:^|[\s;&|(])(?:[^\s;&|(]*/)?`;

/** Rest of the same simple command (stops at a separator or newline). */
const SAME_CMD = String.raw`[^;&|\n]*`;

/** A Unix block device node; `/dev/null`, `/dev/zero`, ttys etc. do not match. */
const BLOCK_DEVICE = String
  .raw`/dev/(?:(?:sd|hd|vd|xvd)[a-z]|nvme\d|mmcblk\d|loop\d|r?disk\d|md\d|dm-\d|mapper/)`;

/** Start of a Windows command word (no `/` path prefix: `/` starts switches there). */
const WIN_CMD = String.raw`(?:^|[\s;&|(])`;

/** The factory rules, in evaluation order. Names are stable identifiers. */
export const FACTORY_COMMAND_POLICY_RULES: readonly Readonly<CommandPolicyRule>[] = Object.freeze([
  {
    name: "rm-recursive-force",
    pattern: `${CMD}rm(?=\\s)` +
      `(?=${SAME_CMD}\\s(?:-[A-Za-z]*[rR]|--recursive(?![\\w-])))` +
      `(?=${SAME_CMD}\\s(?:-[A-Za-z]*f|--force(?![\\w-])))`,
    description: "rm with both a recursive and a force flag (-rf, -fr, -r -f, --recursive --force)",
  },
  {
    name: "mkfs",
    pattern: `${CMD}(?:mkfs(?:\\.[A-Za-z0-9]+)?|mke2fs)(?=$|[\\s;&|)])`,
    description: "creating a file system (mkfs, mkfs.<type>, mke2fs)",
  },
  {
    name: "dd-to-block-device",
    pattern: `${CMD}dd(?=\\s)${SAME_CMD}\\sof=${BLOCK_DEVICE}`,
    description: "dd writing to a block device (of=/dev/sda, /dev/nvme0n1, ...)",
  },
  {
    name: "fork-bomb",
    // The name starts a word (lookbehind): without it every position inside
    // a long word was tried, each scanning to the word's end (quadratic).
    pattern: String
      .raw`(?<![^\s(){}|;&])([^\s(){}|;&]+)\s*\(\s*\)\s*\{\s*\1\s*\|\s*\1\s*&\s*;?\s*\}\s*;?\s*\1(?![^\s;&|])`,
    description: "a shell fork bomb such as :(){ :|:& };:",
  },
  {
    name: "overwrite-block-device",
    pattern:
      `(?:>>?\\|?\\s*|${CMD}(?:tee|shred|wipefs|blkdiscard)(?=\\s)${SAME_CMD}\\s)${BLOCK_DEVICE}`,
    description: "redirecting, tee-ing, shredding or wiping onto a block device",
  },
  {
    name: "windows-recursive-delete",
    pattern:
      `${WIN_CMD}(?:(?i:rd|rmdir|del|erase)(?:\\.exe)?(?=\\s)${SAME_CMD}\\s/(?i:s)(?=$|[\\s/])` +
      `|(?i:remove-item|ri)(?=\\s)${SAME_CMD}\\s-(?i:recurse|r)(?![\\w-]))`,
    description: "rd /s, rmdir /s, del /s, erase /s, Remove-Item -Recurse",
  },
  {
    name: "windows-format-volume",
    pattern: `${WIN_CMD}(?:(?i:format)(?:\\.com)?\\s+[A-Za-z]:|(?i:format-volume)(?![\\w-]))`,
    description: "formatting a volume (format C:, Format-Volume)",
  },
  {
    name: "windows-disk-overwrite",
    pattern: String.raw`(?i:physicaldrive)\d|${WIN_CMD}(?i:clear-disk)(?![\w-])`,
    description: "raw writes to \\\\.\\PhysicalDriveN or Clear-Disk",
  },
  {
    name: "windows-fork-bomb",
    pattern: String.raw`%0\s*\|\s*%0(?!\d)`,
    description: "a batch fork bomb such as %0|%0",
  },
].map((r) => Object.freeze(r)));

/** A fresh, mutable copy of the factory rules (what a new project is seeded with). */
export function factoryCommandPolicyRules(): CommandPolicyRule[] {
  return FACTORY_COMMAND_POLICY_RULES.map((r) => ({ ...r }));
}
