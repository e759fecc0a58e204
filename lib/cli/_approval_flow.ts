/**
 * One approval as `run` and `chat` put it to a person, apart from how the
 * terminal is read: first the checks that need nobody (arguments that do
 * not validate fail without asking; a call an earlier "a" answer covers is
 * allowed), then what the call will do and the answers, then the verdict of
 * the answer with its scope, remembering it for the session on "a".
 *
 * The inputs (`run`'s terminal, chat's raw and line inputs) take an
 * {@linkcode ApprovalQuestion} and read the answer their way.
 *
 * @module
 */
import type { ApprovalVerdict } from "../agent/approval.ts";
import type { ToolCallMessage } from "../protocol/types.ts";
import { safeText } from "../display/terminal_text.ts";
import type { DisplayContext } from "./_approval_display.ts";
import { answerVerdict, type PromptAnswer } from "./_approval_prompt.ts";
import { createSessionRules, ruleFor, type SessionRules } from "./_approval_rules.ts";

/** What the flow needs of the session. */
export interface FlowSession {
  /** The workspace root. */
  readonly workspaceDir: string;
  /** Mask the session's secrets. */
  maskSecrets(text: string): string;
  /** Why a call would fail before its tool does anything, or null. */
  toolArgumentError(name: string, rawArguments: string): string | null;
}

/** One question to a person, as an input shows and settles it. */
export interface ApprovalQuestion {
  /** Lines shown under the call line before the question (no line ends). */
  lines: string[];
  /** The verdict of an answer, and a line saying what was remembered (for `a`). */
  settle(answer: PromptAnswer, note?: string): { verdict: ApprovalVerdict; said?: string };
}

/** Reads one answer: the input shows `question` and settles it, or stops the task. */
export type AskPerson = (call: ToolCallMessage, question: ApprovalQuestion) => Promise<
  ApprovalVerdict
>;

/** The approvals of one session (or one chat): its remembered answers. */
export interface ApprovalFlow {
  /**
   * Judge `call` for a person: settled without them when they need not be
   * asked, else put to them through `person`. `notice` shows a line under
   * the call's line (a call an earlier answer covers).
   */
  ask(
    call: ToolCallMessage,
    person: AskPerson,
    notice: (call: ToolCallMessage, line: string) => void,
  ): Promise<ApprovalVerdict>;
}

/** The flow of one session; `rules` are kept across the calls of the flow. */
export function createApprovalFlow(
  session: FlowSession,
  color: boolean,
  rules: SessionRules = createSessionRules(),
): ApprovalFlow {
  const display: DisplayContext = {
    workspace: session.workspaceDir,
    mask: (t) => session.maskSecrets(t),
    color,
  };
  return {
    async ask(call, person, notice) {
      // An invalid call is never put to a person: it fails with its explanation, running nothing.
      if (session.toolArgumentError(call.name, call.arguments) !== null) {
        return { decision: "allow" };
      }
      const covered = rules.covering(call);
      if (covered !== null) {
        notice(call, `✓ approved for this session: ${safeText(covered.label)}`);
        return { decision: "allow", by: "session_rule", scope: "session", rule: covered.label };
      }
      const rule = ruleFor(call);
      const label = safeText(rule.label);
      // The details' renderers (diffs, redaction) load with the first question, not at start.
      const { approvalDetails } = await import("./_approval_display.ts");
      const lines = [
        ...await approvalDetails(call, display),
        `  y yes · a yes, and don't ask again this session for ${label} · n no, and tell the model`,
        `  Esc or Ctrl-C stops the task`,
      ];
      return await person(call, {
        lines,
        settle(answer, note) {
          if (answer !== "session") return { verdict: answerVerdict(answer, undefined, note) };
          rules.remember(call);
          return {
            verdict: answerVerdict("session", rule.label),
            said: `Remembered for this session: ${label}`,
          };
        },
      });
    },
  };
}
