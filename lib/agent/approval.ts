/**
 * Tool-call approval (reference §6.8, §6.10). An {@linkcode ApproveFn} judges
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

/** Judges one complete tool call. May be async (e.g. a terminal prompt). */
export type ApproveFn = (
  call: ToolCallMessage,
) => ApprovalDecision | Promise<ApprovalDecision>;

/** Asks the host about one call: true / `"allow"` allows, anything else denies. */
export type AskFn = (
  call: ToolCallMessage,
) => boolean | ApprovalDecision | Promise<boolean | ApprovalDecision>;

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
  ask?: AskFn;
  /** A tool's permission, for `read-only` (unknown tools count as `rw`). */
  permissionOf?: (name: string) => ToolPermission | undefined;
}

function asDecision(answer: boolean | ApprovalDecision): ApprovalDecision {
  if (answer === true || answer === "allow") return "allow";
  if (answer === "forbidden") return "forbidden";
  return "deny";
}

/** The approve function of a host mode. */
export function approverForMode(mode: ApprovalMode, opts: ApproverOptions = {}): ApproveFn {
  const ask = async (call: ToolCallMessage): Promise<ApprovalDecision> =>
    opts.ask ? asDecision(await opts.ask(call)) : "deny";
  switch (mode) {
    case "allow-all":
      return () => "allow";
    case "deny-all":
      return () => "deny";
    case "read-only":
      return (call) => (opts.permissionOf?.(call.name) === "r" ? "allow" : ask(call));
    case "always-ask":
      return ask;
  }
}

/**
 * Wrap `approve` with the command policy: a call the policy forbids is
 * `forbidden` without asking; every other call goes to `approve`.
 */
export function withCommandPolicy(approve: ApproveFn, policy: CommandPolicy): ApproveFn {
  return (call) => (policyVerdict(call, policy).forbidden ? "forbidden" : approve(call));
}

/**
 * Run `approve` defensively: a throw, a rejection or an answer that is not a
 * decision all become `deny` (with a note through `warn`).
 */
export async function decide(
  approve: ApproveFn,
  call: ToolCallMessage,
  warn: (line: string) => void,
): Promise<ApprovalDecision> {
  let answer: unknown;
  try {
    answer = await approve(call);
  } catch (err) {
    warn(`[penguin] approve callback threw: ${errorMessage(err)}; denying.`);
    return "deny";
  }
  if (answer === "allow" || answer === "deny" || answer === "forbidden") return answer;
  warn(`[penguin] approve callback returned ${JSON.stringify(answer)}; denying.`);
  return "deny";
}
