/**
 * The words `penguin.jsonc` and its messages share, apart from its parser: the approval
 * modes the file may name and the `line 3, column 5: ` prefix of a message about a setting.
 * Kept free of `jsonc-parser` and zod, which load only when a workspace has the file
 * (lib/sandbox/_workspace_policy_parse.ts).
 *
 * @module
 */

/** Approval modes the file may name (the same strings as lib/agent's `ApprovalMode`), widest first. */
export const POLICY_APPROVAL_MODES = ["allow-all", "read-only", "always-ask", "deny-all"] as const;

/** An approval mode named in `penguin.jsonc`. */
export type PolicyApprovalMode = (typeof POLICY_APPROVAL_MODES)[number];

/** A 1-based line and column. */
export interface Position {
  /** 1-based line. */
  line: number;
  /** 1-based column. */
  column: number;
}

/** `line 3, column 5: ` */
export function at(pos: Position | undefined): string {
  return pos ? `line ${pos.line}, column ${pos.column}: ` : "";
}
