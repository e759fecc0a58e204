/**
 * pi session files (`$PI_CODING_AGENT_DIR/sessions/--<cwd>--/<time>_<id>.jsonl`)
 * to penguin records. The file is a tree: a `session` header, then entries
 * with `id` and `parentId`. The branch leading to the last entry (pi's
 * current leaf) is imported; every other branch is named in the loss
 * report. On that branch, `message` entries (user, assistant, toolResult)
 * are the conversation; the first `model_change` gives the model pair; later
 * model changes, thinking level changes and other entries are reported.
 *
 * @module
 */
import { z } from "zod";
import { createTranscript } from "./_transcript.ts";
import { type ForeignLine, type ForeignSession, splitJsonLines } from "./foreign_session.ts";
import { createLossBook } from "./import_report.ts";

const headerSchema = z.object({
  type: z.literal("session"),
  id: z.string(),
  cwd: z.string(),
  timestamp: z.string().optional(),
  version: z.number().optional(),
});
const entrySchema = z.object({
  type: z.string(),
  id: z.string(),
  parentId: z.string().nullable(),
  timestamp: z.string().optional(),
}).passthrough();
const partSchema = z.object({ type: z.string() }).passthrough();
const messageSchema = z.object({
  role: z.string(),
  content: z.union([z.string(), z.array(partSchema)]).optional(),
  usage: z.object({
    input: z.number(),
    output: z.number(),
    cacheRead: z.number().optional(),
    cacheWrite: z.number().optional(),
  }).optional(),
  toolCallId: z.string().optional(),
  isError: z.boolean().optional(),
  details: z.unknown().optional(),
  stopReason: z.string().optional(),
  errorMessage: z.string().optional(),
}).passthrough();
const toolCallSchema = z.object({ id: z.string(), name: z.string(), arguments: z.unknown() });

/** True when the first line of a file looks like a pi session header. */
export function looksLikePi(first: unknown): boolean {
  return headerSchema.safeParse(first).success;
}

function issue(err: z.ZodError): string {
  const i = err.issues[0];
  return i ? `${i.path.join(".") || "record"}: ${i.message}` : "unexpected shape";
}

type Entry = z.infer<typeof entrySchema> & { line: number };

/** Convert the text of a pi session file (see the module doc). */
export function parsePi(text: string, file: string): ForeignSession {
  // Long because: one pass over the session tree's entries; branch selection and the handlers share
  // the entry map and loss book.
  const { lines, problems } = splitJsonLines(text, file);
  const loss = createLossBook();
  const t = createTranscript(file, loss);
  const bad = (line: number, reason: string) => problems.push({ file, line, reason });
  const s: ForeignSession = {
    harness: "pi",
    file,
    id: "",
    version: null,
    cwd: "",
    provider: "unknown",
    modelId: "unknown",
    systemPrompt: "",
    startedAt: "",
    records: [],
    children: [],
    loss: [],
    problems,
  };
  const [head, ...rest] = lines;
  const h = headerSchema.safeParse(head?.value);
  if (!head || !h.success) {
    bad(
      head?.line ?? 1,
      `expected a pi session header first: ${h.success ? "no lines" : issue(h.error)}`,
    );
  } else {
    s.id = h.data.id;
    s.cwd = h.data.cwd;
    s.startedAt = h.data.timestamp ?? "";
  }
  const entries = parseEntries(head && h.success ? rest : lines, bad);
  const path = branchToLastLeaf(entries, file, loss);
  let modelSet = false;
  for (const e of path) {
    const ts = e.timestamp ?? s.startedAt;
    if (s.startedAt === "") s.startedAt = ts;
    const at = { ts, line: e.line };
    const lost = (kind: string, reason: string) => loss.note(kind, file, e.line, reason);
    if (e.type === "model_change") {
      const provider = (e as { provider?: unknown }).provider;
      const modelId = (e as { modelId?: unknown }).modelId;
      if (!modelSet && typeof provider === "string" && typeof modelId === "string") {
        s.provider = provider;
        s.modelId = modelId;
        modelSet = true;
      } else {
        lost(
          "model_change",
          "a penguin session has one model pair (session_meta); the first one is kept",
        );
      }
      continue;
    }
    if (e.type !== "message") {
      lost(e.type, ENTRY_REASONS[e.type] ?? "a pi entry with no counterpart in a penguin trace");
      continue;
    }
    const m = messageSchema.safeParse((e as { message?: unknown }).message);
    if (!m.success) {
      bad(e.line, `message: ${issue(m.error)}`);
      continue;
    }
    const msg = m.data;
    const parts = typeof msg.content === "string"
      ? [{ type: "text", text: msg.content }]
      : msg.content ?? [];
    const textOf = (p: Record<string, unknown>) => (typeof p.text === "string" ? p.text : null);
    if (msg.role === "user") {
      const texts: string[] = [];
      for (const p of parts) {
        const x = textOf(p);
        if (p.type === "text" && x !== null) texts.push(x);
        else lost(`user content ${p.type}`, "only text parts are imported");
      }
      t.user(texts.join("\n"), at);
    } else if (msg.role === "assistant") {
      if (!modelSet && typeof msg.provider === "string" && typeof msg.model === "string") {
        s.provider = msg.provider;
        s.modelId = msg.model;
        modelSet = true;
      }
      if (msg.stopReason === "error" || msg.stopReason === "aborted") {
        lost(
          `assistant message stopReason ${msg.stopReason}`,
          `the request's failure is not kept${
            msg.errorMessage ? ` (${msg.errorMessage})` : ""
          }; what it produced is`,
        );
      }
      for (const p of parts) {
        const x = textOf(p);
        if (p.type === "text" && x !== null) {
          t.assistant(
            { type: "text", role: "assistant", text: x, stop_reason: "completed" },
            at,
            e.id,
          );
        } else if (p.type === "thinking" && typeof p.thinking === "string") {
          if (typeof p.thinkingSignature === "string" && p.thinkingSignature !== "") {
            lost(
              "thinking signature",
              "valid only with the provider that signed it; the thinking text is kept",
            );
          }
          t.assistant(
            { type: "thinking", role: "assistant", thinking: p.thinking, stop_reason: "completed" },
            at,
            e.id,
          );
        } else if (p.type === "toolCall") {
          const c = toolCallSchema.safeParse(p);
          if (!c.success) {
            bad(e.line, `toolCall: ${issue(c.error)}`);
            continue;
          }
          t.assistant(
            {
              type: "tool_call",
              role: "assistant",
              name: c.data.name,
              arguments: JSON.stringify(c.data.arguments ?? {}),
              tool_call_id: c.data.id,
              stop_reason: "completed",
            },
            at,
            e.id,
          );
        } else {
          lost(`assistant content ${p.type}`, "no penguin counterpart for this content part");
        }
      }
      if (msg.usage) {
        t.usage({
          input: msg.usage.input + (msg.usage.cacheWrite ?? 0),
          cached: msg.usage.cacheRead ?? 0,
          output: msg.usage.output,
        }, at);
      }
    } else if (msg.role === "toolResult") {
      if (msg.toolCallId === undefined) {
        bad(e.line, "toolResult: toolCallId: missing");
        continue;
      }
      const texts: string[] = [];
      for (const p of parts) {
        const x = textOf(p);
        if (p.type === "text" && x !== null) texts.push(x);
        else lost(`toolResult content ${p.type}`, "only text parts are imported");
      }
      if (msg.details !== undefined) {
        lost(
          "toolResult details",
          "structured details for pi's UI (edit diffs, truncation); the text the model saw is kept",
        );
      }
      t.output(msg.toolCallId, texts.join("\n"), msg.isError === true, at);
    } else {
      lost(
        `message role ${msg.role}`,
        "a message pi keeps for its UI, not sent to the model as such",
      );
    }
  }
  s.records = t.finish();
  s.loss = loss.entries();
  return s;
}

function parseEntries(
  lines: readonly ForeignLine[],
  bad: (line: number, reason: string) => void,
): Entry[] {
  const out: Entry[] = [];
  for (const { line, value } of lines) {
    const e = entrySchema.safeParse(value);
    if (!e.success) bad(line, `not a pi session entry: ${issue(e.error)}`);
    else out.push({ ...e.data, line });
  }
  return out;
}

/** The entries from the root to the last entry; the entries off that path are reported per branch. */
function branchToLastLeaf(
  entries: readonly Entry[],
  file: string,
  loss: ReturnType<typeof createLossBook>,
): Entry[] {
  const last = entries.at(-1);
  if (!last) return [];
  const byId = new Map(entries.map((e) => [e.id, e]));
  const onPath = new Set<string>();
  const path: Entry[] = [];
  for (
    let e: Entry | undefined = last;
    e && !onPath.has(e.id);
    e = e.parentId ? byId.get(e.parentId) : undefined
  ) {
    onPath.add(e.id);
    path.push(e);
  }
  path.reverse();
  // Each entry off the path whose parent is on it (or missing) starts a dropped branch.
  const branchOf = new Map<string, string>(); // entry id -> branch start id
  for (const e of entries) {
    if (onPath.has(e.id)) continue;
    const parent = e.parentId ? branchOf.get(e.parentId) : undefined;
    branchOf.set(e.id, parent ?? e.id);
  }
  const sizes = new Map<string, Entry[]>();
  for (const e of entries) {
    const b = branchOf.get(e.id);
    if (b === undefined) continue;
    const list = sizes.get(b);
    if (list) list.push(e);
    else sizes.set(b, [e]);
  }
  for (const [start, members] of sizes) {
    const leaf = members.at(-1)!;
    const from = byId.get(start)?.parentId ?? null;
    for (const m of members) {
      loss.note(
        `branch ${start}`,
        file,
        m.line,
        `a branch not leading to the last entry (it leaves the imported path after ${
          from ?? "the root"
        }; its leaf is ${leaf.id}); pi keeps it, penguin imports one line of history`,
      );
    }
  }
  return path;
}

const ENTRY_REASONS: Record<string, string> = {
  thinking_level_change:
    "the thinking level is a penguin run flag (--thinking), not part of the session",
  compaction:
    "pi's compaction summary; the messages it summarized are imported as they are on the branch",
  branch_summary: "pi's summary of an abandoned branch",
  custom: "an extension's own entry",
  custom_message: "an extension's message",
  label: "a label for pi's tree view",
  session_info: "the session's display name",
};
