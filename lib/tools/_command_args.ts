/**
 * Argument pieces shared by the command tools: the lenient number and
 * boolean parameters, the `description` parameter and the session's
 * sandbox policy (the yield window clamp is `yield_window.ts`).
 *
 * @module
 */
import { z } from "zod";
import { createPolicy, type SandboxPolicy } from "../sandbox/policy.ts";
import type { CommandToolContext } from "./command_context.ts";

/** A millisecond count: a number or numeric string, floored; absent → undefined. */
export const millisArg: z.ZodType<number | undefined> = z.unknown().optional().transform(
  (v, ctx): number | undefined => {
    if (v === undefined || v === null || v === "") return undefined;
    const n = typeof v === "number" ? v : typeof v === "string" ? Number(v.trim()) : Number.NaN;
    if (!Number.isFinite(n)) {
      ctx.addIssue({ code: "custom", message: "expected a number of milliseconds" });
      return z.NEVER;
    }
    return Math.floor(n);
  },
);

/** A boolean, also accepting the strings `true`/`false`; absent → false. */
export const flagArg: z.ZodType<boolean> = z.unknown().optional().transform(
  (v, ctx): boolean => {
    if (v === undefined || v === null) return false;
    if (typeof v === "boolean") return v;
    if (v === "true" || v === "false") return v === "true";
    ctx.addIssue({ code: "custom", message: "expected true or false" });
    return z.NEVER;
  },
);

/** The `description` parameter every command tool declares (they set `callDescription`). */
export const DESCRIPTION_PARAMETER: Record<string, unknown> = {
  type: "string",
  description:
    "One short sentence, in the user's language, saying what this call does and why; shown to the user while it runs. Give it first.",
};

/** The sandbox policy for this call: the session's (or the strict default) with the vault layered on. */
export function commandPolicy(ctx: CommandToolContext): SandboxPolicy {
  const base = ctx.sandbox ?? createPolicy({
    workspace: ctx.workspace,
    ...(ctx.scratchpad !== undefined ? { scratchpad: ctx.scratchpad } : {}),
  });
  if (!ctx.vault || Object.keys(ctx.vault).length === 0) return base;
  return { ...base, env: { ...base.env, vault: { ...base.env.vault, ...ctx.vault } } };
}
