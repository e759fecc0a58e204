/**
 * The command policy: an accident guardrail that vetoes obviously
 * destructive shell text before any approval is asked. Checked are
 * `exec_command`'s `cmd` and `input_command`'s `chars` (a lone `\u0003` is a
 * Ctrl-C, not a command). Enabled rules are tried in order; the first whose
 * pattern matches either text variant forbids the call.
 *
 * Text variants: the whitespace-collapsed, trimmed command, and (when
 * different) the same with `\x`→`x` and every `'`/`"` removed, so
 * `"rm" -rf x`, `\rm -rf x` and `sh -c 'rm -rf /'` meet the plain patterns.
 * Commands computed at run time (`X=rm; $X`, `eval`, base64) are out of
 * scope; the OS sandbox is the boundary, this is a speed bump.
 *
 * Bounded work: regex rules can cost time growing with the square of the
 * text (a rule retried at every `rm` of `rm rm rm …`, each scanning to the
 * end of the command), and a test runs on the main thread, where no signal
 * is acted on meanwhile. So a text longer than {@link POLICY_TEXT_MAX}
 * characters (after collapsing whitespace) is refused outright while any rule
 * is enabled, with a reason telling the model to write it to a file first.
 *
 * @module
 */
import type {
  ApprovalDecision,
  ToolCallMessage,
  ToolCallOutputMessage,
} from "../protocol/types.ts";
import { toolCallOutput } from "../protocol/builders.ts";
import {
  type CommandPolicyRule,
  FACTORY_COMMAND_POLICY_RULES,
} from "../state/command_policy_defaults.ts";

export type { CommandPolicyRule };

/** A session's policy snapshot: a master switch and the ordered rules. */
export interface CommandPolicy {
  /** `false` turns the whole policy off; absent means on. */
  enabled?: boolean;
  /** Rules in evaluation order. */
  rules: readonly CommandPolicyRule[];
}

/**
 * The policy a session snapshots from `[command_policy]`: absent `rules`
 * means the factory set, an empty list means no rules.
 */
export function effectivePolicy(
  config?: { enabled?: boolean; rules?: readonly CommandPolicyRule[] },
): CommandPolicy {
  return {
    enabled: config?.enabled !== false,
    rules: config?.rules ?? FACTORY_COMMAND_POLICY_RULES,
  };
}

/** The verdict on one tool call; `reason`, when set, says why in words. */
export type PolicyVerdict =
  | { forbidden: true; rule: CommandPolicyRule; reason?: string }
  | { forbidden: false };

/** The longest command text (whitespace collapsed) the rules are tried on. */
export const POLICY_TEXT_MAX = 32 * 1024;

/** The stand-in rule a text longer than {@link POLICY_TEXT_MAX} meets. */
export const TOO_LONG_RULE: Readonly<CommandPolicyRule> = Object.freeze({
  name: "command-too-long",
  pattern: "",
  description: `command text longer than ${POLICY_TEXT_MAX} characters, too long to check`,
});

/** The reason given for {@link TOO_LONG_RULE}. */
export const TOO_LONG_REASON = `the command policy checks at most ${POLICY_TEXT_MAX} ` +
  "characters of command text and this one is longer; write long text to a file " +
  "with write_file first, then run or feed that file";

/** The argument holding shell text, per tool name. */
export const POLICY_ARGUMENTS: Readonly<Record<string, string>> = Object.freeze({
  exec_command: "cmd",
  input_command: "chars",
});

/** `input_command` turns a lone U+0003 into SIGINT: exempt from the policy. */
export const INTERRUPT_CHARS = "\u0003";

/** Output fed back for a call the policy forbade (stop reason `aborted`). */
export const DENIED_BY_POLICY = "Tool call denied by policy.";
/** Output fed back for a call the user denied (stop reason `aborted`). */
export const DENIED_BY_USER = "Tool call denied by user.";

const compiled = new Map<string, RegExp | null>();

/** The compiled pattern, or null when it is not a valid JS regex (such rules are skipped). */
export function compileRule(pattern: string): RegExp | null {
  let re = compiled.get(pattern);
  if (re === undefined) {
    try {
      re = new RegExp(pattern);
    } catch {
      re = null;
    }
    if (compiled.size > 1000) compiled.clear();
    compiled.set(pattern, re);
  }
  return re;
}

/** The texts a rule is tested against: collapsed literal, and collapsed unquoted when different. */
export function commandVariants(cmd: string): string[] {
  const collapse = (s: string) => s.replace(/\s+/g, " ").trim();
  const literal = collapse(cmd);
  const unquoted = collapse(cmd.replace(/\\(.)/gs, "$1").replace(/['"]/g, ""));
  return unquoted === literal ? [literal] : [literal, unquoted];
}

/**
 * The first enabled rule matching `cmd`, or undefined; {@link TOO_LONG_RULE}
 * when `cmd` is too long to check and any rule is enabled.
 */
export function matchCommand(
  cmd: string,
  rules: readonly CommandPolicyRule[],
): CommandPolicyRule | undefined {
  const variants = commandVariants(cmd);
  if (variants[0] === "") return undefined;
  const tooLong = variants.some((v) => v.length > POLICY_TEXT_MAX);
  if (tooLong && rules.some((r) => r.enabled !== false)) return TOO_LONG_RULE;
  for (const rule of rules) {
    if (rule.enabled === false) continue;
    const re = compileRule(rule.pattern);
    if (re && variants.some((v) => re.test(v))) return rule;
  }
  return undefined;
}

/**
 * Judge a tool call. Only `exec_command` and `input_command` are checked;
 * malformed argument JSON, a non-object, or a non-string argument is not a
 * hit (the tool reports it). `policy` may be a bare rule list.
 */
export function policyVerdict(
  call: Pick<ToolCallMessage, "name" | "arguments">,
  policy: CommandPolicy | readonly CommandPolicyRule[],
): PolicyVerdict {
  const { enabled, rules } = Array.isArray(policy)
    ? { enabled: true, rules: policy as readonly CommandPolicyRule[] }
    : policy as CommandPolicy;
  if (enabled === false) return { forbidden: false };
  const key = POLICY_ARGUMENTS[call.name];
  if (key === undefined) return { forbidden: false };
  let args: unknown;
  try {
    args = JSON.parse(call.arguments);
  } catch {
    return { forbidden: false };
  }
  if (args === null || typeof args !== "object" || Array.isArray(args)) return { forbidden: false };
  const text = (args as Record<string, unknown>)[key];
  if (typeof text !== "string" || text === INTERRUPT_CHARS) return { forbidden: false };
  const rule = matchCommand(text, rules);
  if (rule === TOO_LONG_RULE) return { forbidden: true, rule, reason: TOO_LONG_REASON };
  return rule ? { forbidden: true, rule } : { forbidden: false };
}

/**
 * The `tool_call_output` for a call that was not allowed to run (`forbidden`
 * or `deny`), stop reason `aborted`: the fixed sentence, then `Reason: <why>.`
 * when the approver gave one, then `The user says: <note>` when the person
 * who denied it left a note for the model.
 */
export function denialOutput(
  call: Pick<ToolCallMessage, "tool_call_id">,
  decision: Exclude<ApprovalDecision, "allow">,
  reason?: string,
  note?: string,
): ToolCallOutputMessage {
  const fixed = decision === "forbidden" ? DENIED_BY_POLICY : DENIED_BY_USER;
  const why = reason?.trim().replace(/\.$/, "");
  const text = why ? `${fixed} Reason: ${why}.` : fixed;
  const told = note ? `${text}\nThe user says: ${note}` : text;
  return toolCallOutput(call.tool_call_id, told, "aborted");
}
