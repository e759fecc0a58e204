/**
 * Terminal rendering of trace records, one record at a time (used by
 * `trace show` and `trace follow`). User text is prefixed `> `, thinking is
 * dimmed, tool calls show their preview and arguments, tool outputs are
 * collapsed to their first and last 4 lines, approvals, aborts, retries,
 * compactions and subagent pointers get one line each (§8.2 conventions).
 * With colour off the output has no ANSI codes at all.
 *
 * @module
 */
import type { OmniMessage, SessionMeta } from "../protocol/types.ts";
import {
  collapseLines,
  escapeControls,
  formatClock,
  formatDuration,
  formatTime,
  formatTokens,
  parseTimestamp,
  safeText,
  type Style,
} from "./format.ts";
import { parseToolArgs, toolPreview, toolTag } from "./preview.ts";
import { failureLabel, readFailure } from "../models/failure.ts";

/** Options of {@linkcode createRenderer}. */
export interface RenderOptions {
  /** Colours. */
  style: Style;
  /** Show tool outputs and multi-line arguments whole. */
  full?: boolean;
  /** Prefix of every line (children rendered inline are indented). */
  indent?: string;
  /** Set for a child session rendered inline: tags become `[agent-…-tool-…]`. */
  childSessionId?: string;
  /** Start printing at request N (1-based); earlier records are skipped, except the header. */
  fromRequest?: number;
}

/** A stateful renderer of one session. */
export interface Renderer {
  /** Render the next record; returns the text to print (possibly ""). */
  record(msg: OmniMessage, file?: string): string;
  /** Requests begun so far. */
  readonly requests: number;
}

const RETRY_WORDS: Record<string, string> = {
  timeout: "connection timed out",
  malformed: "response incomplete or unparseable",
};

/**
 * The retry reason of a request_end: its failure class (`connection
 * refused`, `HTTP 503`, `DNS failure`, …, see lib/models/failure.ts), or the
 * §8.2 words for its status when the message names no known class.
 */
export function retryReason(status: string, errorMessage?: string): string {
  const facts = readFailure(status, errorMessage);
  if (facts.class !== "other") return failureLabel(facts);
  return RETRY_WORDS[status] ?? "the model provider returned an error";
}

function metaLines(m: SessionMeta, ts: string, file: string | undefined, s: Style): string[] {
  const head = `session ${m.session_id} · ${m.provider}/${m.model_id} · ${formatTime(ts)}`;
  const facts = [`workspace ${m.workspace}`];
  if (m.source) facts.push(`source ${m.source}`);
  const lin = m.lineage as Record<string, unknown> | undefined;
  if (lin && typeof lin === "object") {
    facts.push(
      `${lin.kind ?? "fork"} of ${lin.parent_session_id} (file _${
        String(lin.trace_index ?? "?").padStart(3, "0")
      }, line ${lin.line ?? "?"})`,
    );
  }
  if (file) facts.push(`file ${file}`);
  return [s.bold(safeText(head)), s.dim(safeText(facts.join(" · ")))];
}

function argLines(args: string, full: boolean): string[] {
  const a = parseToolArgs(args);
  if (!a) return collapseLines(args, full);
  const out: string[] = [];
  for (const [k, v] of Object.entries(a)) {
    if (typeof v === "string" && v.includes("\n")) {
      out.push(`${k}: |`);
      for (const l of collapseLines(v, full)) out.push(`  ${l}`);
    } else {
      out.push(`${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`);
    }
  }
  return out;
}

/** A renderer for one session (see the module doc). */
export function createRenderer(options: RenderOptions): Renderer {
  const s = options.style;
  const full = options.full ?? false;
  const indent = options.indent ?? "";
  const from = options.fromRequest ?? 1;
  const names = new Map<string, string>();
  let requests = 0;
  let beginTs = NaN;
  let usage: Record<string, number> | null = null;
  let metas = 0;
  let pending: string[] = []; // output held back until request `from` begins
  let started = from <= 1;

  const emit = (lines: string[]) => {
    const text = lines.map((l) => indent + l + "\n").join("");
    if (started) return text;
    pending.push(text);
    return "";
  };
  const tag = (id: string) => escapeControls(toolTag(id, options.childSessionId));

  const render = (msg: OmniMessage, file?: string): string => {
    if (msg.type === "session_meta") {
      metas++;
      const lines = metaLines(msg.payload, msg.timestamp, file, s);
      if (metas === 1) return lines.map((l) => indent + l + "\n").join(""); // header: always
      return emit([s.dim(`── new context (after compaction) · ${file ?? "next file"} ──`)]);
    }
    const p = msg.payload;
    if (msg.type === "model_msg") {
      switch (p.type) {
        case "text": {
          const text = safeText(p.text as string);
          if (p.role === "user") {
            const who = p.sender ? `[${p.sender}] ` : "";
            const lines = text.split("\n");
            return emit(lines.map((l, i) => s.bold(i === 0 ? `> ${who}${l}` : `  ${l}`)));
          }
          const lines = text.split("\n");
          if (p.stop_reason !== "completed") lines.push(s.red(`[text ended: ${p.stop_reason}]`));
          return emit(lines);
        }
        case "thinking": {
          const t = safeText(p.thinking as string);
          if (t === "") return emit([s.dim("(thinking: encrypted or empty)")]);
          return emit(t.split("\n").map((l) => s.dim(l)));
        }
        case "inline_thinking":
          return emit([
            s.dim(`(inline thinking: ${p.mime_type}, ${(p.data as string).length} base64 chars)`),
          ]);
        case "tool_call": {
          const id = p.tool_call_id as string;
          names.set(id, escapeControls(p.name as string));
          // Arguments are shown, never cleaned: control characters in them appear as \xNN.
          const head = s.cyan(
            escapeControls(`${tag(id)} ${toolPreview(p.name as string, p.arguments as string)}`),
          );
          const lines = [
            head,
            ...argLines(p.arguments as string, full).map((l) => s.dim(`  ${escapeControls(l)}`)),
          ];
          if (p.stop_reason !== "completed") {
            lines.push(s.red(`  (call not dispatched: ${p.stop_reason})`));
          }
          return emit(lines);
        }
        case "tool_call_output": {
          const id = p.tool_call_id as string;
          const name = names.get(id) ?? "?";
          const out = safeText(p.output as string);
          const body = collapseLines(out, full);
          const status = p.stop_reason === "completed" ? "" : ` ${s.red(`[${p.stop_reason}]`)}`;
          const images = Array.isArray(p.images) && p.images.length > 0
            ? ` [${p.images.length} image(s)]`
            : "";
          const gutter = `${tag(id)} ${name} ->`;
          if (body.length <= 1) {
            return emit([`${s.cyan(gutter)}${status}${images} ${body[0] ?? ""}`]);
          }
          const count = s.dim(`(${out.split("\n").length} lines)`);
          return emit([
            `${s.cyan(gutter)}${status}${images} ${count}`,
            ...body.map((l) => `  │ ${l}`),
          ]);
        }
        case "image_url": {
          const url = p.image_url as string;
          const shown = url.startsWith("data:")
            ? `${url.slice(0, url.indexOf(",") + 1)}… (${url.length} chars)`
            : url;
          return emit([`[image] ${safeText(shown)}`]);
        }
        case "inline_data":
          return emit([`[inline data: ${p.mime_type}, ${(p.data as string).length} base64 chars]`]);
        default:
          return emit([s.dim(`[${String(p.type)}]`)]);
      }
    }
    switch (p.type) {
      case "request_begin": {
        requests++;
        beginTs = parseTimestamp(msg.timestamp);
        usage = null;
        if (!started && requests >= from) {
          started = true;
          const held = pending.join("");
          pending = [];
          return held + emit([s.dim(`── request ${requests} · ${formatClock(msg.timestamp)} ──`)]);
        }
        pending = [];
        return emit([s.dim(`── request ${requests} · ${formatClock(msg.timestamp)} ──`)]);
      }
      case "token_usage": {
        usage = p.request as Record<string, number>;
        return "";
      }
      case "request_end": {
        const ms = parseTimestamp(msg.timestamp) - beginTs;
        const took = Number.isFinite(ms) ? ` · ${formatDuration(ms)}` : "";
        let out: string;
        if (p.status === "completed") {
          const u = usage;
          const tokens = u
            ? ` · tokens ${formatTokens(u.total ?? 0)} (cached ${u.cache_read ?? 0}, uncached ${
              u.cache_write ?? 0
            }, output ${u.output ?? 0})`
            : "";
          out = emit([s.dim(`── request ${requests} completed${took}${tokens} ──`)]);
        } else {
          const err = p.error_message ? `: ${safeText(String(p.error_message))}` : "";
          const attempt = p.attempt !== undefined ? ` (attempt ${p.attempt})` : "";
          const line = p.retry_in_ms !== undefined
            ? `[retry] ${
              retryReason(
                String(p.status),
                typeof p.error_message === "string" ? p.error_message : undefined,
              )
            } — ${p.status}${err}${attempt}; retrying in ${formatDuration(Number(p.retry_in_ms))}`
            : `[request ${p.status}]${err}${attempt}`;
          out = emit([s.yellow(`${line}${took}`)]);
        }
        if (!started) pending = [];
        return out;
      }
      case "approval_decision": {
        const d = p.decision;
        const line = d === "allow"
          ? s.green("✓ [approved]")
          : d === "deny"
          ? s.red("× [denied]")
          : s.red("× [forbidden by policy]");
        return emit([`${line} ${s.dim(tag(p.tool_call_id as string))}`]);
      }
      case "abort":
        return emit([s.red(`[abort]: ${safeText(String(p.reason ?? "(no reason)"))}`)]);
      case "compaction_begin":
        return emit([
          s.yellow(
            `[compaction] ${
              p.mode === "discard" ? "discarding" : "summarizing"
            } context (${p.reason})…`,
          ),
        ]);
      case "compaction_end":
        if (p.status === "completed") return emit([s.yellow(`[compaction] done (${p.mode})`)]);
        return emit([
          s.yellow(
            `[compaction] ${p.status}${
              p.error_message ? ` (${safeText(String(p.error_message))})` : ""
            }; keeping the current context`,
          ),
        ]);
      case "subagent":
        return emit([s.cyan(`[subagent] ${p.session_id}`)]);
      case "tool_list_ready": {
        const tools = (p.tools as { name?: unknown }[]).map((t) => String(t.name));
        return emit([s.dim(`[tools] ${tools.length}: ${tools.join(", ")}`)]);
      }
      case "mcp_connect_begin":
        return emit([
          s.dim(`[mcp] connecting MCP servers (${(p.servers as string[]).join(", ")})…`),
        ]);
      case "mcp_connect_end": {
        const results = p.results as { server?: string; status?: string }[];
        const bad = results.filter((r) => r.status !== "completed").map((r) => r.server);
        return emit([
          s.dim(`[mcp] ${p.status}${bad.length ? `; unavailable: ${bad.join(", ")}` : ""}`),
        ]);
      }
      case "goal_finished":
        return emit([
          s.yellow(
            `[goal] ${p.outcome} · ${p.rounds} rounds · tokens ${
              formatTokens(Number(p.tokens_used))
            }`,
          ),
        ]);
      case "workspace_moved":
        return emit([
          s.yellow(
            `[workspace moved] ${safeText(String(p.from))} → ${
              safeText(String(p.to))
            } (the recorded workspace was gone)`,
          ),
        ]);
      default:
        return emit([s.dim(`[${String(p.type)}] ${safeText(JSON.stringify(p))}`)]);
    }
  };

  return {
    record: render,
    get requests() {
      return requests;
    },
  };
}
