/**
 * Tool-call approval. An {@linkcode ApproveFn} judges
 * each complete tool call exactly once: `allow`, `deny` or `forbidden`.
 *
 * Hosts pick a mode: `allow-all`, `deny-all`, `read-only` (tools whose
 * permission is `r` run, others are asked) or `always-ask`. Asking goes to a
 * host callback; with none, the call is denied. The project command policy
 * wraps whatever the host chose and vetoes destructive shell text as
 * `forbidden` before anything is asked, even under `allow-all`.
 *
 * @module
 */
import { errorMessage, PenguinError } from "../protocol/errors.ts";
import type { ApprovalDecision, ToolCallMessage } from "../protocol/types.ts";
import { type CommandPolicy, policyVerdict } from "../tools/command_policy.ts";
import type { ToolPermission } from "../tools/tool.ts";

/** Approval modes a host can run a task with. */
export type ApprovalMode = "allow-all" | "deny-all" | "read-only" | "always-ask";

/** Every {@linkcode ApprovalMode}. */
export const APPROVAL_MODES: readonly ApprovalMode[] = [
  "allow-all",
  "deny-all",
  "read-only",
  "always-ask",
];

/** A decision with the reason a denial is given (recorded, shown, and told to the model). */
export interface ApprovalVerdict {
  /** The decision. */
  decision: ApprovalDecision;
  /** Why the call may not run, e.g. `denied by the user`, `policy rule "mkfs"`. */
  reason?: string;
  /**
   * Who settled it: `user` (a person answered this call) or `session_rule`
   * (a person's earlier "for this session" answer covers it). Absent: the
   * approval mode or the command policy decided.
   */
  by?: "user" | "session_rule";
  /** `call`: this call only; `session`: also the same kind of call for the rest of the session. */
  scope?: "call" | "session";
  /** What a session-scoped answer covers, e.g. `exec_command calls starting with "git status"`. */
  rule?: string;
  /** The person's note to the model, sent with a denial. */
  note?: string;
}

/** The extra fields of a verdict (who, scope, rule, note) that are well-formed. */
function verdictExtras(
  answer: Record<string, unknown>,
): Omit<ApprovalVerdict, "decision" | "reason"> {
  const out: Omit<ApprovalVerdict, "decision" | "reason"> = {};
  if (answer.by === "user" || answer.by === "session_rule") out.by = answer.by;
  if (answer.scope === "call" || answer.scope === "session") out.scope = answer.scope;
  if (typeof answer.rule === "string" && answer.rule !== "") out.rule = answer.rule;
  if (typeof answer.note === "string" && answer.note.trim() !== "") out.note = answer.note.trim();
  return out;
}

/** What an approver answers: a bare decision or a verdict with its reason. */
export type ApprovalAnswer = ApprovalDecision | ApprovalVerdict;

/** Judges one complete tool call. May be async (e.g. a terminal prompt). */
export type ApproveFn = (
  call: ToolCallMessage,
) => ApprovalAnswer | Promise<ApprovalAnswer>;

/** Asks the host about one call: true / `"allow"` allows, anything else denies. */
export type AskFn = (
  call: ToolCallMessage,
) => boolean | ApprovalAnswer | Promise<boolean | ApprovalAnswer>;

/** Reasons the harness gives for denials it decides itself. */
export const DENIAL_REASONS = {
  /** The user answered no (the host's ask callback said false or deny). */
  user: "the user answered no",
  /** A bare `deny` from an approve callback. */
  callback: "the approval callback denied it",
  /** `deny-all`. */
  denyAll: "approval mode deny-all",
  /** `always-ask` with nobody to ask. */
  noAsker: "approval mode always-ask, and there is no one to ask",
  /** `read-only` with nobody to ask about a tool that may change things. */
  readOnly: "approval mode read-only runs only read tools when there is no one to ask",
  /** The engine got no approve function at all. */
  noApprover: "no approval callback was given",
  /** A bare `forbidden` that named no rule. */
  policy: "the command policy",
} as const;

const DECISIONS: readonly unknown[] = ["allow", "deny", "forbidden"];

/** The default reason of a non-allow decision. */
function defaultReason(decision: ApprovalDecision): string | undefined {
  if (decision === "deny") return DENIAL_REASONS.callback;
  if (decision === "forbidden") return DENIAL_REASONS.policy;
  return undefined;
}

/**
 * Normalize an approver's answer: a decision or a verdict becomes a verdict
 * (non-allow ones always carry a reason; a bare `deny` gets `fallback`, else
 * a generic one); anything else is null.
 */
export function verdictOf(answer: unknown, fallback?: string): ApprovalVerdict | null {
  let decision: unknown = answer;
  let reason: unknown;
  let extras: Omit<ApprovalVerdict, "decision" | "reason"> = {};
  if (answer !== null && typeof answer === "object" && !Array.isArray(answer)) {
    decision = (answer as ApprovalVerdict).decision;
    reason = (answer as ApprovalVerdict).reason;
    extras = verdictExtras(answer as Record<string, unknown>);
  }
  if (!DECISIONS.includes(decision)) return null;
  const d = decision as ApprovalDecision;
  if (d === "allow") return { decision: d, ...extras };
  const why = typeof reason === "string" && reason.trim() !== ""
    ? reason
    : (d === "deny" ? fallback : undefined) ?? defaultReason(d);
  return { decision: d, reason: why!, ...extras };
}

/** Parse an `--approve` value, case-insensitively; throws a usage error otherwise. */
export function parseApprovalMode(value: string, flag = "--approve"): ApprovalMode {
  const v = value.trim().toLowerCase();
  if ((APPROVAL_MODES as readonly string[]).includes(v)) return v as ApprovalMode;
  throw new PenguinError(
    "usage",
    `${flag} must be one of ${APPROVAL_MODES.join(", ")}, got ${JSON.stringify(value)}`,
  );
}

/** Options of {@linkcode approverForMode}. */
export interface ApproverOptions {
  /** Asked for calls the mode does not settle; absent → those calls are denied. */
  ask?: AskFn | undefined;
  /**
   * The permission of a call, for `read-only` (unknown tools count as `rw`);
   * given the call's arguments when they are a JSON object.
   */
  permissionOf?: (name: string, args?: Record<string, unknown>) => ToolPermission | undefined;
}

/** A call's arguments as an object, or undefined when they are not a JSON object. */
function argumentsObject(raw: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(raw);
    return v !== null && typeof v === "object" && !Array.isArray(v)
      ? v as Record<string, unknown>
      : undefined;
  } catch {
    return undefined;
  }
}

function asVerdict(answer: boolean | ApprovalAnswer): ApprovalVerdict {
  if (answer === true) return { decision: "allow" };
  return verdictOf(answer, DENIAL_REASONS.user) ??
    { decision: "deny", reason: DENIAL_REASONS.user };
}

/** The approve function of a host mode; every denial it makes carries its reason. */
export function approverForMode(mode: ApprovalMode, opts: ApproverOptions = {}): ApproveFn {
  const ask = (unanswered: string) => async (call: ToolCallMessage): Promise<ApprovalVerdict> =>
    opts.ask ? asVerdict(await opts.ask(call)) : { decision: "deny", reason: unanswered };
  switch (mode) {
    case "allow-all":
      return () => "allow";
    case "deny-all":
      return () => ({ decision: "deny", reason: DENIAL_REASONS.denyAll });
    case "read-only": {
      const asked = ask(DENIAL_REASONS.readOnly);
      return (call) =>
        opts.permissionOf?.(call.name, argumentsObject(call.arguments)) === "r"
          ? "allow"
          : asked(call);
    }
    case "always-ask":
      return ask(DENIAL_REASONS.noAsker);
  }
}

/**
 * Wrap `approve` with the command policy: a call the policy forbids is
 * `forbidden` without asking; every other call goes to `approve`.
 */
export function withCommandPolicy(approve: ApproveFn, policy: CommandPolicy): ApproveFn {
  return (call) => {
    const v = policyVerdict(call, policy);
    return v.forbidden
      ? { decision: "forbidden", reason: v.reason ?? `policy rule "${v.rule.name}"` }
      : approve(call);
  };
}

/**
 * Run `approve` defensively: a throw, a rejection or an answer that is not a
 * decision all become `deny` (with a note through `warn`). Every non-allow
 * verdict carries a reason.
 */
export async function decide(
  approve: ApproveFn,
  call: ToolCallMessage,
  warn: (line: string) => void,
): Promise<ApprovalVerdict> {
  let answer: unknown;
  try {
    answer = await approve(call);
  } catch (err) {
    warn(`[penguin] approve callback threw: ${errorMessage(err)}; denying.`);
    return { decision: "deny", reason: "the approval callback failed" };
  }
  const v = verdictOf(answer);
  if (v !== null) return v;
  warn(`[penguin] approve callback returned ${JSON.stringify(answer)}; denying.`);
  return { decision: "deny", reason: "the approval callback gave no decision" };
}
