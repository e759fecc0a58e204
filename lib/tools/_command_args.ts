/**
 * Argument pieces shared by the command tools: the lenient number and
 * boolean parameters (offered to the model as `number` and `boolean`), the `description` parameter and the session's
 * sandbox policy (the yield window clamp is `yield_window.ts`).
 *
 * @module
 */
import { z } from "zod";
import { offeredAs } from "./_args.ts";
import { createPolicy, type SandboxPolicy } from "../sandbox/policy.ts";
import type { CommandToolContext } from "./command_context.ts";

/**
 * A millisecond count: a number or numeric string, floored; absent → undefined.
 * Offered to the model as a `number` described by `description`.
 */
export function millisArg(description: string): z.ZodType<number | undefined> {
  return offeredAs(millisValue, "number", description);
}

/** A boolean, also accepting the strings `true`/`false`; absent → false; offered as a `boolean`. */
export function flagArg(description: string): z.ZodType<boolean> {
  return offeredAs(flagValue, "boolean", description);
}

const millisValue: z.ZodType<number | undefined> = z.unknown().optional().transform(
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

const flagValue: z.ZodType<boolean> = z.unknown().optional().transform(
  (v, ctx): boolean => {
    if (v === undefined || v === null) return false;
    if (typeof v === "boolean") return v;
    if (v === "true" || v === "false") return v === "true";
    ctx.addIssue({ code: "custom", message: "expected true or false" });
    return z.NEVER;
  },
);

/**
 * The `description` parameter every command tool declares first (they set
 * `callDescription`, which lists it as required in the schema offered).
 */
export const descriptionArg: z.ZodOptional<z.ZodString> = z.string().describe(
  "One short sentence, in the user's language, saying what this call does and why; shown to the user while it runs. Give it first.",
).optional();

/** The `process_id` parameter of input_command and kill_command. */
export const processIdArg: z.ZodString = z.string().min(1).describe(
  "The process_id exec_command returned (proc-…).",
);

/** The sandbox policy for this call: the session's (or the strict default) with the vault layered on. */
export function commandPolicy(
  ctx: Pick<CommandToolContext, "sandbox" | "workspace" | "scratchpad" | "vault">,
): SandboxPolicy {
  const base = ctx.sandbox ?? createPolicy({
    workspace: ctx.workspace,
    ...(ctx.scratchpad !== undefined ? { scratchpad: ctx.scratchpad } : {}),
  });
  if (!ctx.vault || Object.keys(ctx.vault).length === 0) return base;
  return { ...base, env: { ...base.env, vault: { ...base.env.vault, ...ctx.vault } } };
}
