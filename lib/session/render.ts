/**
 * Plain-text renderings of session data for the `penguin sessions …`
 * commands: the listing table, the numbered outline and the tree.
 *
 * @module
 */
import { formatTokens } from "../display/numbers.ts";
import type { SessionSummary } from "./list.ts";
import type { OutlineItem, SessionOutline } from "./outline.ts";
import type { TreeNode } from "./tree.ts";

/** Token counts in the one short form (lib/display/numbers.ts), `-` when unknown. */
export function shortCount(n: number | null): string {
  return n === null ? "-" : formatTokens(n);
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** An ISO timestamp as local `YYYY-MM-DD HH:MM`; `-` when absent or unparseable. */
export function localTime(iso: string | null, seconds = false): string {
  if (iso === null) return "-";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "-";
  const s = seconds ? `:${pad(d.getSeconds())}` : "";
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${
    pad(d.getMinutes())
  }${s}`;
}

// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/g;

/** `text` on one line (whitespace runs collapsed, control characters dropped), cut to `max` characters with `…`. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(CONTROL, "").replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : flat.slice(0, Math.max(0, max - 1)) + "…";
}

function shortPath(p: string | null, max: number): string {
  if (p === null) return "-";
  return p.length <= max ? p : "…" + p.slice(p.length - max + 1);
}

function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n") +
    "\n";
}

function promptLabel(s: SessionSummary): string {
  let label = s.firstPrompt === null ? "-" : oneLine(s.firstPrompt, 48);
  if (s.lineage) {
    label = `(${s.lineage.kind} of …${s.lineage.parent_session_id.slice(-8)}) ${label}`;
  } else if (s.source) label = `(${s.source}) ${label}`;
  return label;
}

/** The `sessions list` table (an AGENT column when `withAgent`). */
export function formatSessionList(rows: SessionSummary[], withAgent = false): string {
  if (rows.length === 0) return "No sessions.\n";
  const header = [
    "ID",
    ...(withAgent ? ["AGENT"] : []),
    "CREATED",
    "LAST ACTIVITY",
    "MODEL",
    "WORKSPACE",
    "TURNS",
    "TOKENS",
    "FIRST PROMPT",
  ];
  const body = rows.map((s) => [
    s.sessionId,
    ...(withAgent ? [s.agentId] : []),
    localTime(s.created),
    localTime(s.lastActivity),
    s.provider && s.modelId ? `${s.provider}/${s.modelId}` : "-",
    shortPath(s.workspace, 40),
    s.turns === null ? "?" : String(s.turns),
    shortCount(s.tokens),
    promptLabel(s),
  ]);
  return table([header, ...body]) + `${rows.length} session(s)\n`;
}

function itemLine(it: OutlineItem, width: number): string | null {
  const mark = it.status && it.status !== "completed" ? ` [${it.status}]` : "";
  switch (it.kind) {
    case "prompt":
      return `[${it.n}] user: ${oneLine(it.text, width)}`;
    case "user":
      return `    ${it.sender ?? "user"}: ${oneLine(it.text, width)}`;
    case "summary":
      return `    summary: ${oneLine(it.text, width)}`;
    case "assistant":
      return `    assistant${mark}: ${oneLine(it.text, width)}`;
    case "thinking":
      return `    thinking: ${oneLine(it.text, width)}`;
    case "tool_call":
      return `    -> ${it.name}${mark} ${oneLine(it.text, width)}`;
    case "tool_output":
      return `    <- ${it.name ?? it.toolCallId}${mark}: ${
        oneLine(it.text, width)
      } (${it.chars} chars)`;
    case "media":
      return `    ${oneLine(it.text, width)}`;
    case "event":
      switch (it.event) {
        case "request_end":
          return it.status === "completed"
            ? null
            : `    ! request ${it.status}${it.text ? `: ${oneLine(it.text, width)}` : ""}`;
        case "abort":
          return `    ! abort${it.text ? `: ${oneLine(it.text, width)}` : ""}`;
        case "compaction_begin":
          return `    ~ compaction (${it.text})`;
        case "compaction_end":
          return `    ~ compaction ${it.status}${it.text ? `: ${oneLine(it.text, width)}` : ""}`;
        case "subagent":
          return `    subagent session ${it.text}`;
      }
  }
  return null;
}

/** The `sessions show` text: a header, then the numbered prompts with what followed each. */
export function formatOutline(o: SessionOutline, width = 100): string {
  const m = o.meta;
  const latest = o.files[o.files.length - 1];
  const lines = [
    `Session ${o.sessionId}`,
    `  model      ${m ? `${m.provider}/${m.model_id}` : "-"}`,
    `  workspace  ${m?.workspace ?? "-"}`,
    `  created    ${localTime(o.created, true)}   last activity ${localTime(o.lastActivity, true)}`,
    `  files      ${o.files.length}${latest ? ` (latest ${latest.path})` : ""}`,
    `  turns      ${o.turns}   tokens ${
      shortCount(o.tokens?.total ?? null)
    }   user messages ${o.prompts}`,
  ];
  if (m?.source) lines.push(`  source     ${m.source}`);
  const lin = m?.lineage as {
    kind: string;
    parent_session_id: string;
    trace_index: number;
    line: number;
  } | undefined;
  if (lin) {
    lines.push(
      `  lineage    ${lin.kind} of ${lin.parent_session_id} (file ${lin.trace_index}, line ${lin.line})`,
    );
  }
  const imp = m?.imported_from as { path?: string; session_id?: string } | undefined;
  if (imp) lines.push(`  imported   from ${imp.path} (session ${imp.session_id})`);
  if (o.problems.length > 0) lines.push(`  skipped    ${o.problems.length} damaged line(s)`);
  lines.push("");
  let file = o.files[0]?.index ?? 1;
  for (const it of o.items) {
    if (it.file !== file) {
      file = it.file;
      lines.push(`  --- context continues in file _${String(file).padStart(3, "0")} ---`);
    }
    const l = itemLine(it, width);
    if (l !== null) lines.push(l);
  }
  return lines.join("\n") + "\n";
}

function nodeLabel(n: TreeNode): string {
  const s = n.summary;
  const rel = n.relation === "root" ? "" : `[${n.relation}] `;
  if (!s) return `${rel}${n.sessionId} (not on disk)`;
  const prompt = s.firstPrompt === null ? "" : `  ${oneLine(s.firstPrompt, 48)}`;
  return `${rel}${n.sessionId}  ${localTime(s.created)}${prompt}`;
}

/** The `sessions tree` text. */
export function formatTree(forest: TreeNode[]): string {
  if (forest.length === 0) return "No sessions.\n";
  const out: string[] = [];
  const walk = (n: TreeNode, prefix: string, last: boolean, top: boolean) => {
    out.push(top ? nodeLabel(n) : `${prefix}${last ? "└─ " : "├─ "}${nodeLabel(n)}`);
    const next = top ? "" : prefix + (last ? "   " : "│  ");
    n.children.forEach((c, i) => walk(c, next, i === n.children.length - 1, false));
  };
  for (const r of forest) walk(r, "", true, true);
  return out.join("\n") + "\n";
}
