/**
 * What an "a" answer at the approval question remembers for the rest of the
 * session, and which later calls that covers.
 *
 * - `exec_command`: the command's prefix — its first word, and its second
 *   when that looks like a subcommand (`git status`, `npm test`, `ls`). A remembered
 *   prefix covers only simple commands: a later command containing any shell
 *   operator, substitution, redirection, quote or escape (`;`, `&`, `|`,
 *   `$`, backquote, `<`, `>`, parentheses, braces, quotes, backslash, a newline)
 *   is asked about again, so `ls; rm -rf ~` never rides on `ls`. A command
 *   that is not simple itself is remembered exactly, character for character.
 *   The working directory must match too.
 * - File tools (`write_file`, `edit_file`, …): the same tool on the same path.
 * - Any other tool: the same tool with the same arguments.
 *
 * @module
 */
import type { ToolCallMessage } from "../protocol/types.ts";

/** One remembered answer: the key later calls are matched by, and how it reads on screen. */
export interface SessionRule {
  /** Match key: equal keys are the same kind of call. */
  key: string;
  /** What it covers, e.g. `exec_command commands starting with "git status"`. */
  label: string;
}

/** Characters that make a shell command more than one simple command. */
const NOT_SIMPLE = /[;&|$`<>(){}'"\\\n\r*?~!#[\]]/;
/** A plain word: a command name. */
const PLAIN_WORD = /^[A-Za-z0-9][A-Za-z0-9._+:@/=-]*$/;
/** A subcommand name (`status`, `run-script`): no dot, slash or sign, so no file name. */
const SUBCOMMAND = /^[a-z][a-z0-9_-]*$/;

function argsOf(call: ToolCallMessage): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(call.arguments);
    return v !== null && typeof v === "object" && !Array.isArray(v)
      ? v as Record<string, unknown>
      : null;
  } catch {
    return null;
  }
}

/** The remembered prefix of a simple command, or null when the command is not simple. */
export function commandPrefix(cmd: string): string | null {
  const text = cmd.trim();
  if (text === "" || NOT_SIMPLE.test(text)) return null;
  const words = text.split(/[ \t]+/);
  if (!PLAIN_WORD.test(words[0]!)) return null;
  const second = words[1];
  return second !== undefined && SUBCOMMAND.test(second) ? `${words[0]} ${second}` : words[0]!;
}

/** Does `prefix` cover `cmd` (a simple command starting with its words)? */
function coveredCommand(prefix: string, cmd: string): boolean {
  const text = cmd.trim();
  if (NOT_SIMPLE.test(text)) return false;
  const words = text.split(/[ \t]+/);
  const want = prefix.split(" ");
  return want.every((w, i) => words[i] === w);
}

function workdirOf(args: Record<string, unknown>): string {
  return typeof args.workdir === "string" ? args.workdir : "";
}

const FILE_PATH_KEYS = ["file_path", "path"] as const;

function filePathOf(args: Record<string, unknown>): string | null {
  for (const k of FILE_PATH_KEYS) if (typeof args[k] === "string") return args[k] as string;
  return null;
}

/** The rule an "a" answer to `call` remembers. */
export function ruleFor(call: ToolCallMessage): SessionRule {
  const args = argsOf(call) ?? {};
  const dir = workdirOf(args);
  const inDir = dir === "" ? "" : ` in ${JSON.stringify(dir)}`;
  if (call.name === "exec_command" && typeof args.cmd === "string") {
    const prefix = commandPrefix(args.cmd);
    if (prefix !== null) {
      return {
        key: `exec_command\0prefix\0${prefix}\0${dir}`,
        label: `commands starting with "${prefix}"${inDir}`,
      };
    }
    return {
      key: `exec_command\0exact\0${args.cmd}\0${dir}`,
      label: `this exact command${inDir}`,
    };
  }
  const path = filePathOf(args);
  if (path !== null) {
    return { key: `${call.name}\0path\0${path}`, label: `${call.name} on ${JSON.stringify(path)}` };
  }
  return {
    key: `${call.name}\0args\0${JSON.stringify(args)}`,
    label: `${call.name} with these arguments`,
  };
}

/** The rules of one session: remembered answers, and the one covering a call. */
export interface SessionRules {
  /** Remember `call`'s rule; returns it. */
  remember(call: ToolCallMessage): SessionRule;
  /** The remembered rule covering `call`, or null. */
  covering(call: ToolCallMessage): SessionRule | null;
}

/** An empty set of session rules. */
export function createSessionRules(): SessionRules {
  const rules = new Map<string, SessionRule>();
  return {
    remember(call) {
      const rule = ruleFor(call);
      rules.set(rule.key, rule);
      return rule;
    },
    covering(call) {
      const exact = rules.get(ruleFor(call).key);
      if (exact) return exact;
      const args = argsOf(call);
      if (call.name !== "exec_command" || !args || typeof args.cmd !== "string") return null;
      const dir = workdirOf(args);
      for (const rule of rules.values()) {
        const [tool, kind, prefix, ruleDir] = rule.key.split("\0");
        if (tool !== "exec_command" || kind !== "prefix" || ruleDir !== dir) continue;
        if (coveredCommand(prefix!, args.cmd)) return rule;
      }
      return null;
    },
  };
}
