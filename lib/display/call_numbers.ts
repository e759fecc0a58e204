/**
 * Short call ids: `#1`, `#2`, … numbered per session in the order the
 * session's tool calls first appear in its trace. The live renderer, the
 * history re-rendered on `chat --resume` and the offline views (`trace
 * show`, `trace follow`, the demo) all number from the trace's own order, so
 * one call has one number in every view. A call forwarded from a subagent
 * is numbered within its child session (the innermost origin), as `trace
 * show` numbers that child's own trace, and tagged `[agent-<sid3> #n]`.
 *
 * @module
 */
import type { OmniMessage } from "../protocol/types.ts";
import { short3 } from "./labels.ts";
import { forgetOldest } from "../protocol/forget_oldest.ts";

/** The numbers given so far, per session scope. */
export interface CallNumbers {
  /** The number of call `id` (given now, the next one, when it is new). */
  of(id: string, origin?: readonly string[]): number;
  /** Number the tool calls of recorded messages, in order (a resumed session's history). */
  seed(messages: Iterable<OmniMessage>): void;
  /** Forget every number: a new session starts at `#1`. */
  reset(): void;
}

/** The scope of a call: "" for the session itself, else its innermost child session. */
function scopeOf(origin?: readonly string[]): string {
  return origin && origin.length > 0 ? origin[origin.length - 1]! : "";
}

/**
 * The most call ids a scope remembers: past it the oldest is forgotten (an
 * output of a call that old is numbered anew). A view of a trace of 600,000
 * calls kept every id (attack round 24 bounded R9).
 */
export const MAX_NUMBERED_IDS = 65_536;

/** Create an empty numbering. */
export function createCallNumbers(): CallNumbers {
  let scopes = new Map<string, { ids: Map<string, number>; next: number }>();
  const of = (id: string, origin?: readonly string[]): number => {
    const scope = scopeOf(origin);
    let s = scopes.get(scope);
    if (!s) scopes.set(scope, s = { ids: new Map(), next: 1 });
    let n = s.ids.get(id);
    if (n === undefined) {
      s.ids.set(id, n = s.next++);
      forgetOldest(s.ids, MAX_NUMBERED_IDS);
    }
    return n;
  };
  return {
    of,
    seed(messages) {
      for (const m of messages) {
        if (m.type === "model_msg" && m.payload.type === "tool_call") {
          of(m.payload.tool_call_id, m.origin);
        }
      }
    },
    reset() {
      scopes = new Map();
    },
  };
}

/**
 * The tag of call number `n`: `[#3]`, or for a call forwarded from a child
 * session `[agent-f2a #3]` (f2a = the last three characters of the innermost
 * child session id; 3 = the call's number in that child's trace).
 */
export function callNumberTag(n: number, origin?: readonly string[]): string {
  const child = scopeOf(origin);
  return child === "" ? `[#${n}]` : `[agent-${short3(child)} #${n}]`;
}

/** Read `#3` or `3` as a call number, else undefined. */
export function parseCallNumber(text: string): number | undefined {
  const m = /^#?([1-9]\d{0,8})$/.exec(text.trim());
  return m ? Number(m[1]) : undefined;
}
