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
import {
  assistantPart,
  type AssistantPartForm,
  finishForeignParse,
  type ForeignParse,
  issue,
  startForeignParse,
  textParts,
} from "./_foreign_parse.ts";
import { type At, cacheSplitUsage } from "./_transcript.ts";
import type { ForeignLine, ForeignSession, ForeignText, RecordSink } from "./foreign_session.ts";
import type { LossBook } from "./import_report.ts";

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
  }).transform((u) => cacheSplitUsage(u.input, u.cacheWrite ?? 0, u.cacheRead ?? 0, u.output))
    .optional(),
  toolCallId: z.string().optional(),
  isError: z.boolean().optional(),
  details: z.unknown().optional(),
  stopReason: z.string().optional(),
  errorMessage: z.string().optional(),
}).passthrough();

/** True when the first line of a file looks like a pi session header. */
export function looksLikePi(first: unknown): boolean {
  return headerSchema.safeParse(first).success;
}

type Entry = z.infer<typeof entrySchema> & { line: number };

/** pi's names for the parts of an assistant message. */
const PI_PARTS: AssistantPartForm = {
  toolCall: "toolCall",
  callSchema: z.object({ id: z.string(), name: z.string(), arguments: z.unknown() }),
  args: "arguments",
  signature: "thinkingSignature",
  noun: "content part",
};

/** One parse of a pi session: the shared parse and whether the model pair is set. */
interface PiParse {
  p: ForeignParse;
  modelSet: boolean;
}

/** Convert the text of a pi session file (see the module doc); with `sink`, its records go there. */
export function parsePi(text: ForeignText, file: string, sink?: RecordSink): ForeignSession {
  const p = startForeignParse(text, file, "pi", "unknown", sink);
  // Each pass parses the lines again and keeps only what it needs: the entries' ids and parents
  // first, then the branch's entries one at a time (a 62 MB session of 400,000 entries held
  // whole, several times over, took the import to 486 MB; attack round 21 bounded #3).
  let head: ForeignLine | undefined;
  for (const l of p.lines) {
    head = l;
    break;
  }
  const h = headerSchema.safeParse(head?.value);
  if (!head || !h.success) {
    p.bad(
      head?.line ?? 1,
      `expected a pi session header first: ${h.success ? "no lines" : issue(h.error)}`,
    );
  } else {
    p.s.id = h.data.id;
    p.s.cwd = h.data.cwd;
    p.s.startedAt = h.data.timestamp ?? "";
  }
  const skip = head && h.success ? head.line : undefined;
  const nodes = entryNodes(p.lines, skip, p.bad);
  const path = branchToLastLeaf(nodes, file, p.loss);
  const cx: PiParse = { p, modelSet: false };
  const each = (e: Entry) => {
    const ts = e.timestamp ?? p.s.startedAt;
    if (p.s.startedAt === "") p.s.startedAt = ts;
    piEntry(cx, e, { ts, line: e.line });
  };
  const place = new Map(path.map((line, i) => [line, i]));
  const inFileOrder = path.every((line, i) => i === 0 || line > path[i - 1]!);
  // In file order (pi appends a child after its parent), each is converted as it is reached;
  // otherwise the branch's entries are gathered and converted in the branch's order.
  const gathered: Entry[] = [];
  for (const { line, value } of p.lines) {
    if (!place.has(line)) continue;
    const e = entrySchema.safeParse(value);
    if (!e.success) continue;
    const entry = { ...e.data, line };
    if (inFileOrder) each(entry);
    else gathered[place.get(line)!] = entry;
  }
  if (!inFileOrder) { for (const e of gathered) if (e) each(e); }
  return finishForeignParse(p);
}

/** One entry on the imported branch. */
function piEntry(cx: PiParse, e: Entry, at: At): void {
  const { p } = cx;
  if (e.type === "model_change") {
    const provider = (e as { provider?: unknown }).provider;
    const modelId = (e as { modelId?: unknown }).modelId;
    if (!cx.modelSet && typeof provider === "string" && typeof modelId === "string") {
      p.s.provider = provider;
      p.s.modelId = modelId;
      cx.modelSet = true;
    } else {
      p.lost(
        e.line,
        "model_change",
        "a penguin session has one model pair (session_meta); the first one is kept",
      );
    }
    return;
  }
  if (e.type !== "message") {
    return p.lost(
      e.line,
      e.type,
      ENTRY_REASONS[e.type] ?? "a pi entry with no counterpart in a penguin trace",
    );
  }
  const m = messageSchema.safeParse((e as { message?: unknown }).message);
  if (!m.success) return p.bad(e.line, `message: ${issue(m.error)}`);
  const msg = m.data;
  const parts = typeof msg.content === "string"
    ? [{ type: "text", text: msg.content }]
    : msg.content ?? [];
  if (msg.role === "user") {
    p.t.user(partsText(p, parts, "user content", at), at);
  } else if (msg.role === "assistant") {
    assistantMessage(cx, msg, parts, e.id, at);
  } else if (msg.role === "toolResult") {
    toolResult(p, msg, parts, at);
  } else {
    p.lost(
      e.line,
      `message role ${msg.role}`,
      "a message pi keeps for its UI, not sent to the model as such",
    );
  }
}

type Message = z.infer<typeof messageSchema>;
type Part = z.infer<typeof partSchema>;

/** The text parts joined; every other part noted as `<what> <type>`. */
function partsText(p: ForeignParse, parts: readonly Part[], what: string, at: At): string {
  const { text, other } = textParts(parts);
  for (const o of other) p.lost(at.line, `${what} ${o}`, "only text parts are imported");
  return text;
}

function assistantMessage(
  cx: PiParse,
  msg: Message,
  parts: readonly Part[],
  requestKey: string,
  at: At,
): void {
  const { p } = cx;
  if (!cx.modelSet && typeof msg.provider === "string" && typeof msg.model === "string") {
    p.s.provider = msg.provider;
    p.s.modelId = msg.model;
    cx.modelSet = true;
  }
  if (msg.stopReason === "error" || msg.stopReason === "aborted") {
    p.lost(
      at.line,
      `assistant message stopReason ${msg.stopReason}`,
      `the request's failure is not kept${
        msg.errorMessage ? ` (${msg.errorMessage})` : ""
      }; what it produced is`,
    );
  }
  for (const part of parts) assistantPart(p, part, at, requestKey, PI_PARTS);
  if (msg.usage) p.t.usage(msg.usage, at);
}

function toolResult(p: ForeignParse, msg: Message, parts: readonly Part[], at: At): void {
  if (msg.toolCallId === undefined) return p.bad(at.line, "toolResult: toolCallId: missing");
  const text = partsText(p, parts, "toolResult content", at);
  if (msg.details !== undefined) {
    p.lost(
      at.line,
      "toolResult details",
      "structured details for pi's UI (edit diffs, truncation); the text the model saw is kept",
    );
  }
  p.t.output(msg.toolCallId, text, msg.isError === true, at);
}

/** What the branch search keeps of an entry: its id, its parent and its line. */
interface EntryNode {
  id: string;
  parentId: string | null;
  line: number;
}

/** The entries of `lines` (but the header at line `skip`) as nodes; a malformed one is reported. */
function entryNodes(
  lines: Iterable<ForeignLine>,
  skip: number | undefined,
  bad: (line: number, reason: string) => void,
): EntryNode[] {
  const out: EntryNode[] = [];
  for (const { line, value } of lines) {
    if (line === skip) continue;
    const e = entrySchema.safeParse(value);
    if (!e.success) bad(line, `not a pi session entry: ${issue(e.error)}`);
    else out.push({ id: e.data.id, parentId: e.data.parentId, line });
  }
  return out;
}

/**
 * The lines of the entries from the root to the last entry, in that order; the entries off that
 * path are reported per branch.
 */
function branchToLastLeaf(
  entries: readonly EntryNode[],
  file: string,
  loss: LossBook,
): number[] {
  const last = entries.at(-1);
  if (!last) return [];
  const byId = new Map(entries.map((e) => [e.id, e]));
  const onPath = new Set<string>();
  const path: number[] = [];
  for (
    let e: EntryNode | undefined = last;
    e && !onPath.has(e.id);
    e = e.parentId ? byId.get(e.parentId) : undefined
  ) {
    onPath.add(e.id);
    path.push(e.line);
  }
  path.reverse();
  noteDroppedBranches(entries, onPath, byId, file, loss);
  return path;
}

/**
 * Branches named one by one in the loss report; those past them are counted together. A star of
 * 400,000 one-entry branches, each a report entry of its own, took the import to 445 MB (attack
 * round 22 bounded).
 */
const NAMED_BRANCHES = 50;

/** Note every entry off the imported path in `loss`, per branch (see {@linkcode NAMED_BRANCHES}). */
function noteDroppedBranches(
  entries: readonly EntryNode[],
  onPath: ReadonlySet<string>,
  byId: ReadonlyMap<string, EntryNode>,
  file: string,
  loss: LossBook,
): void {
  // Each entry off the path whose parent is on it (or missing) starts a dropped branch.
  const branchOf = new Map<string, string>(); // entry id -> branch start id
  // The named branches' leaves (their last entry in file order).
  const leafOf = new Map<string, string>();
  for (const e of entries) {
    if (onPath.has(e.id)) continue;
    const parent = e.parentId ? branchOf.get(e.parentId) : undefined;
    const start = parent ?? e.id;
    branchOf.set(e.id, start);
    if (leafOf.has(start) || (parent === undefined && leafOf.size < NAMED_BRANCHES)) {
      leafOf.set(start, e.id);
    }
  }
  const reasons = new Map<string, string>();
  for (const [start, leaf] of leafOf) {
    const from = byId.get(start)?.parentId ?? null;
    reasons.set(
      start,
      `a branch not leading to the last entry (it leaves the imported path after ${
        from ?? "the root"
      }; its leaf is ${leaf}); pi keeps it, penguin imports one line of history`,
    );
  }
  const others = Math.max(0, countStarts(entries, branchOf) - NAMED_BRANCHES);
  const otherReason = `one of ${others} more branches not leading to the last entry (the first ` +
    `${NAMED_BRANCHES} are named); pi keeps them, penguin imports one line of history`;
  for (const e of entries) {
    const start = branchOf.get(e.id);
    if (start === undefined) continue;
    const reason = reasons.get(start);
    if (reason !== undefined) loss.note(`branch ${start}`, file, e.line, reason);
    else loss.note("more branches", file, e.line, otherReason);
  }
}

/** How many branches `branchOf` holds (entries that start their own). */
function countStarts(entries: readonly EntryNode[], branchOf: ReadonlyMap<string, string>): number {
  let n = 0;
  for (const e of entries) if (branchOf.get(e.id) === e.id) n++;
  return n;
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
