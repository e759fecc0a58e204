/**
 * Helpers of the resume, compaction and crash tests: comparing the context a
 * request carried (as the scripted server received it) with what a trace
 * says was committed, agent config edits, and hashing a data root to prove a
 * refusal wrote nothing.
 *
 * Requests are compared as "atoms": one per system prompt, per user message
 * (or content part), per assistant message and per tool result. Chat
 * Completions sends consecutive user texts as one message joined by blank
 * lines; {@linkcode assertContext} merges them the same way on both sides,
 * so "the history, then the new prompt" stays a plain list comparison.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { isComplete } from "../../lib/protocol/guards.ts";
import type { CompleteMessage, OmniMessage } from "../../lib/protocol/types.ts";
import { loadSystemConfig, saveSystemConfig } from "../../lib/state/system_config_parse.ts";
import { DEFAULT_COMPACTION_PROMPT } from "../../lib/state/default_prompts.ts";
import { type ModelServer, type ScriptedTurn, startModelServer } from "../support/model_server.ts";

/** One unit of a Chat Completions context. */
export interface Atom {
  /** Who. */
  role: "system" | "user" | "assistant" | "tool";
  /** Text (assistant: content; tool: output). */
  text?: string;
  /** Assistant tool calls: `name(arguments)#id`. */
  calls?: string[];
  /** Tool result: the call id it answers. */
  id?: string;
  /** A non-text user part (image URL). */
  image?: string;
}

type Json = Record<string, unknown>;

/** The atoms of a Chat Completions `messages` array. */
export function atomsOfRequest(messages: readonly Json[]): Atom[] {
  const out: Atom[] = [];
  for (const m of messages) {
    const role = m.role as Atom["role"];
    if (role === "tool") {
      out.push({ role, id: String(m.tool_call_id), text: String(m.content) });
    } else if (role === "assistant") {
      const calls = (m.tool_calls as Json[] | undefined ?? []).map((c) => {
        const f = c.function as Json;
        return `${f.name}(${f.arguments})#${c.id}`;
      });
      out.push({ role, text: String(m.content ?? ""), calls });
    } else if (typeof m.content === "string") {
      out.push({ role, text: m.content });
    } else {
      for (const part of m.content as Json[]) {
        if (part.type === "text") out.push({ role, text: String(part.text) });
        else out.push({ role, image: String((part.image_url as Json).url) });
      }
    }
  }
  return out;
}

/** The atoms the `i`-th request the server received carried. */
export function requestAtoms(server: ModelServer, i: number): Atom[] {
  const req = server.requests[i];
  if (!req) throw new Error(`request ${i} was not made (${server.requests.length} made)`);
  return atomsOfRequest((req.body as { messages: Json[] }).messages);
}

const outbound = (id: string) => id.replace(/#\d+$/, "");

/**
 * The atoms of a context given as complete messages (history order):
 * adjacent assistant messages form one assistant message, as they are sent.
 */
export function atomsOfContext(messages: readonly CompleteMessage[]): Atom[] {
  const out: Atom[] = [];
  let assistant: Atom | null = null;
  for (const m of messages) {
    if (m.role === "assistant") {
      assistant ??= { role: "assistant", text: "", calls: [] };
      if (m.type === "text") assistant.text += m.text;
      if (m.type === "tool_call") {
        assistant.calls!.push(`${m.name}(${m.arguments})#${outbound(m.tool_call_id)}`);
      }
      continue;
    }
    if (assistant) out.push(assistant);
    assistant = null;
    if (m.type === "tool_call_output") {
      out.push({ role: "tool", id: outbound(m.tool_call_id), text: m.output });
    } else if (m.type === "text") out.push({ role: "user", text: m.text });
    else if (m.type === "image_url") out.push({ role: "user", image: m.image_url });
  }
  if (assistant) out.push(assistant);
  return out;
}

/** The complete model messages among trace records, in order. */
export function completes(records: readonly OmniMessage[]): CompleteMessage[] {
  return records.flatMap((r) =>
    r.type === "model_msg" && isComplete(r.payload) ? [r.payload as CompleteMessage] : []
  );
}

/** A user atom. */
export const userAtom = (text: string): Atom => ({ role: "user", text });

/**
 * Merge consecutive user text atoms into one, joined by a blank line, as
 * Chat Completions sends a run of user texts (one message, one string).
 */
export function normalizeAtoms(atoms: readonly Atom[]): Atom[] {
  const out: Atom[] = [];
  for (const a of atoms) {
    const prev = out.at(-1);
    const isText = a.role === "user" && a.text !== undefined;
    if (isText && prev?.role === "user" && prev.text !== undefined) {
      out[out.length - 1] = { role: "user", text: `${prev.text}\n\n${a.text}` };
    } else out.push({ ...a });
  }
  return out;
}

/** Assert two contexts are the same once consecutive user texts are merged. */
export function assertContext(
  actual: readonly Atom[],
  expected: readonly Atom[],
  message?: string,
): void {
  assert.deepEqual(normalizeAtoms(actual), normalizeAtoms(expected), message);
}

/** Merge `patch` into the agent's `system_config.yaml` under `root` (default agent). */
export async function patchAgentConfig(
  root: string,
  patch: Record<string, unknown>,
): Promise<void> {
  const path = join(
    root,
    "default_project",
    "agents",
    "default_agent",
    "agent_state",
    "system_config.yaml",
  );
  const cfg = await loadSystemConfig(path);
  for (const [k, v] of Object.entries(patch)) {
    const cur = (cfg as Record<string, unknown>)[k];
    (cfg as Record<string, unknown>)[k] = typeof v === "object" && v !== null && !Array.isArray(v)
      ? { ...(cur as Record<string, unknown> ?? {}), ...v }
      : v;
  }
  await saveSystemConfig(path, cfg);
}

/** A digest of every file (path, size, content) and directory under `dir`, to prove nothing changed. */
export async function treeDigest(dir: string): Promise<string> {
  const lines: string[] = [];
  async function walk(d: string): Promise<void> {
    const entries: Deno.DirEntry[] = [];
    for await (const e of Deno.readDir(d)) entries.push(e);
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory) {
        lines.push(`d ${relative(dir, p)}`);
        await walk(p);
      } else if (e.isFile) {
        const bytes = await Deno.readFile(p);
        const hash = await crypto.subtle.digest("SHA-256", bytes);
        const hex = [...new Uint8Array(hash)].map((b) => b.toString(16).padStart(2, "0")).join("");
        lines.push(`f ${relative(dir, p)} ${bytes.length} ${hex}`);
      } else lines.push(`l ${relative(dir, p)}`);
    }
  }
  await walk(dir);
  return lines.join("\n");
}

/** A server answering compaction requests from `compaction`, the others from `main`. */
export function compactionAwareServer(
  main: ScriptedTurn[],
  compaction: ScriptedTurn[] = [],
): Promise<ModelServer> {
  return startModelServer({
    handler: (req) => {
      const atoms = atomsOfRequest((req.body as { messages: Record<string, unknown>[] }).messages);
      return (atoms.at(-1)?.text?.endsWith(DEFAULT_COMPACTION_PROMPT) === true ? compaction : main)
        .shift();
    },
  });
}
