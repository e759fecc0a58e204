// Argument checks of the subagent tools. A failure is one sentence for the
// `[<tool> error: …]` output the model reads.
import type { ThinkingLevel } from "../../models/wire.ts";
import { NAME_ID_PATTERN } from "../../state/ids.ts";
import { SUBAGENT_THINKING_LEVELS } from "./definitions.ts";

/** Checked arguments, or what is wrong with them. */
export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

/** The arguments of run_subagent. */
export interface RunArgs {
  prompt: string;
  agentId?: string;
  provider?: string;
  modelId?: string;
  thinkingLevel?: ThinkingLevel;
  yieldMs?: number;
  background: boolean;
}

/** The arguments of input_subagent. */
export interface InputArgs {
  subagentId: string;
  prompt?: string;
  yieldMs?: number;
}

class ArgError extends Error {}

function optString(args: Record<string, unknown>, name: string): string | undefined {
  const v = args[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") {
    throw new ArgError(`argument "${name}" must be a string, but ${describe(v)} was received`);
  }
  return v.trim() === "" ? undefined : v;
}

function reqString(args: Record<string, unknown>, name: string, what: string): string {
  const v = optString(args, name);
  if (v === undefined) {
    throw new ArgError(
      args[name] === undefined
        ? `required argument "${name}" is missing: ${what}`
        : `required argument "${name}" is empty: ${what}`,
    );
  }
  return v;
}

function describe(v: unknown): string {
  if (Array.isArray(v)) return "an array";
  if (v === null) return "null";
  return typeof v === "object" ? "an object" : `a ${typeof v}`;
}

function millis(args: Record<string, unknown>): number | undefined {
  const v = args.yield_time_ms;
  if (v === undefined || v === null || v === "") return undefined;
  const n = typeof v === "number" ? v : typeof v === "string" ? Number(v.trim()) : Number.NaN;
  if (!Number.isFinite(n)) {
    throw new ArgError(
      `argument "yield_time_ms" must be a number of milliseconds, got ${JSON.stringify(v)}`,
    );
  }
  return Math.floor(n);
}

function flag(args: Record<string, unknown>, name: string): boolean {
  const v = args[name];
  if (v === undefined || v === null) return false;
  if (typeof v === "boolean") return v;
  if (v === "true" || v === "false") return v === "true";
  throw new ArgError(`argument "${name}" must be true or false, got ${JSON.stringify(v)}`);
}

function check<T>(fn: () => T): Checked<T> {
  try {
    return { ok: true, value: fn() };
  } catch (err) {
    if (err instanceof ArgError) return { ok: false, message: err.message };
    throw err;
  }
}

/** Check run_subagent's arguments. */
export function checkRunArgs(args: Record<string, unknown>): Checked<RunArgs> {
  return check(() => {
    const prompt = reqString(args, "prompt", "give the whole task for the subagent");
    const agentId = optString(args, "agent_id");
    if (agentId !== undefined && !NAME_ID_PATTERN.test(agentId)) {
      throw new ArgError(
        `agent_id ${
          JSON.stringify(agentId)
        } is not a valid agent id: only letters, digits, "_" and "-" are allowed`,
      );
    }
    const provider = optString(args, "provider");
    const modelId = optString(args, "model_id");
    if ((provider === undefined) !== (modelId === undefined)) {
      throw new ArgError(
        `model_id and provider must be given together (a model is always named by the pair), got ${
          provider === undefined ? "model_id" : "provider"
        } alone; omit both to use this session's model`,
      );
    }
    const level = optString(args, "thinking_level");
    if (
      level !== undefined && !(SUBAGENT_THINKING_LEVELS as readonly string[]).includes(level)
    ) {
      throw new ArgError(
        `thinking_level must be one of ${SUBAGENT_THINKING_LEVELS.join(", ")}, got ${
          JSON.stringify(level)
        }`,
      );
    }
    const yieldMs = millis(args);
    const out: RunArgs = { prompt, background: flag(args, "run_in_background") };
    if (agentId !== undefined) out.agentId = agentId;
    if (provider !== undefined && modelId !== undefined) {
      out.provider = provider;
      out.modelId = modelId;
    }
    if (level !== undefined) out.thinkingLevel = level as ThinkingLevel;
    if (yieldMs !== undefined) out.yieldMs = yieldMs;
    return out;
  });
}

/** Check input_subagent's arguments. */
export function checkInputArgs(args: Record<string, unknown>): Checked<InputArgs> {
  return check(() => {
    const subagentId = reqString(args, "subagent_id", "name the subagent run_subagent returned")
      .trim();
    const prompt = optString(args, "prompt");
    const yieldMs = millis(args);
    const out: InputArgs = { subagentId };
    if (prompt !== undefined) out.prompt = prompt;
    if (yieldMs !== undefined) out.yieldMs = yieldMs;
    return out;
  });
}

/** Check kill_subagent's arguments. */
export function checkKillArgs(args: Record<string, unknown>): Checked<{ subagentId: string }> {
  return check(() => ({
    subagentId: reqString(args, "subagent_id", "name the subagent run_subagent returned").trim(),
  }));
}
