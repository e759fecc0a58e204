/**
 * Trace records the session, trace and inspect tests all build: one test
 * session_meta payload and the writer's JSONL form; and the trace files a
 * run left under a directory.
 *
 * @module
 */
import { join } from "node:path";
import type { OmniMessage, SessionMeta } from "../../lib/protocol/mod.ts";

/** A session_meta payload for `id` on the `(custom, mock)` model, with `extra` fields over it. */
export function testMeta(id: string, extra: Partial<SessionMeta> = {}): SessionMeta {
  return {
    session_id: id,
    provider: "custom",
    model_id: "mock",
    model_context_window: 1000000,
    system_prompt: "test prompt",
    agent_state: "/tmp/agent_state",
    workspace: "/tmp",
    ...extra,
  };
}

/** Serialise records the way the trace writer does: one JSON line each. */
export function toJsonl(messages: readonly OmniMessage[]): string {
  return messages.map((m) => JSON.stringify(m) + "\n").join("");
}

/** The `.jsonl` files under `dir`, at any depth (in directory order). */
export async function traceFilesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) out.push(...await traceFilesUnder(p));
    else if (e.isFile && p.endsWith(".jsonl")) out.push(p);
  }
  return out;
}
