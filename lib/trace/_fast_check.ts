// A fast pre-check for the reader's hot path. `certainlyValid(v)` returns true
// only when `validateMessage(v)` would accept `v`; it returns false when it is
// unsure (rare record kinds, rare optional fields) or when `v` is invalid, and
// the caller then runs the full zod validation, which decides and words the
// problem. So every record is validated; the common ones just skip zod.
// tests/trace/fast_check_test.ts cross-checks this against validateMessage.
import { z } from "zod";
import { STOP_REASONS } from "../protocol/types.ts";

// The very pattern zod's `z.iso.datetime({ offset: true })` uses.
const TIMESTAMP = z.core.regexes.datetime({ offset: true });
const STOP = new Set<unknown>(STOP_REASONS);
const ROLES = new Set<unknown>(["user", "assistant"]);
const SENDERS = new Set<unknown>(["parent_agent", "harness", "server"]);
const DECISIONS = new Set<unknown>(["allow", "deny", "forbidden"]);

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const str = (v: unknown): boolean => typeof v === "string";
const nonEmpty = (v: unknown): boolean => typeof v === "string" && v.length > 0;
const count = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;
const optStr = (v: unknown): boolean => v === undefined || typeof v === "string";
const optFidelity = (v: unknown): boolean => v === undefined || isObj(v);

function counts(v: unknown): boolean {
  return isObj(v) && count(v.cache_read) && count(v.cache_write) && count(v.output) &&
    count(v.total);
}

function stringArray(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  for (const s of v) if (typeof s !== "string") return false;
  return true;
}

function tools(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  for (const t of v) if (!isObj(t) || !str(t.name) || !str(t.description)) return false;
  return true;
}

function modelPayload(p: Obj): boolean {
  if (!STOP.has(p.stop_reason)) return false;
  switch (p.type) {
    case "text":
      return ROLES.has(p.role) && str(p.text) &&
        (p.sender === undefined || SENDERS.has(p.sender)) &&
        optFidelity(p.fidelity);
    case "thinking":
      return p.role === "assistant" && str(p.thinking) && optFidelity(p.fidelity);
    case "tool_call":
      return p.role === "assistant" && str(p.name) && str(p.arguments) && str(p.tool_call_id) &&
        optFidelity(p.fidelity);
    case "tool_call_output":
      return p.role === "user" && str(p.output) && str(p.tool_call_id) &&
        (p.images === undefined || stringArray(p.images));
    default:
      return false;
  }
}

function eventPayload(p: Obj): boolean {
  switch (p.type) {
    case "request_begin":
      return true;
    case "request_end":
      return STOP.has(p.status) && optStr(p.error_message) &&
        (p.attempt === undefined ||
          (Number.isSafeInteger(p.attempt) && (p.attempt as number) > 0)) &&
        (p.retry_in_ms === undefined || count(p.retry_in_ms));
    case "token_usage":
      return counts(p.session) && counts(p.request);
    case "approval_decision":
      return DECISIONS.has(p.decision) && str(p.tool_call_id);
    case "tool_list_ready":
      return tools(p.tools);
    default:
      return false;
  }
}

function sessionMeta(p: Obj): boolean {
  const w = p.model_context_window;
  return nonEmpty(p.session_id) && nonEmpty(p.provider) && nonEmpty(p.model_id) &&
    (w === "unknown" || (typeof w === "number" && Number.isFinite(w) && w >= 0)) &&
    str(p.system_prompt) && str(p.agent_state) && str(p.workspace) &&
    (p.source === undefined || p.source === "subagent" || p.source === "schedule") &&
    p.lineage === undefined;
}

/** True only when `validateMessage(v)` certainly succeeds; false means "ask zod". */
export function certainlyValid(v: unknown): boolean {
  if (!isObj(v)) return false;
  const p = v.payload;
  if (!isObj(p) || typeof v.timestamp !== "string" || !TIMESTAMP.test(v.timestamp)) return false;
  if (v.origin !== undefined) return false;
  switch (v.type) {
    case "model_msg":
      return modelPayload(p);
    case "event_msg":
      return eventPayload(p);
    case "session_meta":
      return sessionMeta(p);
    default:
      return false;
  }
}
