/**
 * `trace show`: stream a session's records to text (or raw JSONL), file after
 * file, with subagent children rendered inline on request. Output is written
 * in chunks as records are read, so the first screen of a huge trace appears
 * at once and a closed pipe stops the read.
 *
 * @module
 */
import type { OmniMessage } from "../protocol/types.ts";
import {
  keepProblem,
  problemsLeftOut,
  readTrace,
  skippedLinesNotice,
  type TraceProblem,
} from "../trace/reader.ts";
import type { Style } from "../display/palette.ts";
import { createRenderer } from "./render.ts";
import { maskedText } from "../protocol/record_mask.ts";
import { findRelative, type SessionFiles } from "../trace/session_files.ts";

/** Options of {@linkcode showSessions}. */
export interface ShowOptions {
  /** Colours. */
  style: Style;
  /** Expand collapsed outputs. */
  full?: boolean;
  /** Print raw envelopes (JSONL) instead of the rendering. */
  json?: boolean;
  /** Start at request N (1-based). */
  fromRequest?: number | undefined;
  /** Render subagent children inline (found next to the parent's traces). */
  children?: boolean;
  /** Where the text goes. */
  out: (text: string) => void;
  /** Where notices go (skipped lines, children not found). */
  err: (text: string) => void;
  /** Applied to every record read (the current secrets masked). */
  mask?: ((message: OmniMessage) => OmniMessage) | undefined;
}

const MAX_DEPTH = 4;
const FLUSH_AT = 64 * 1024;

/** A JSONL sink honouring `--turn`: records before request N's input are dropped. */
function jsonGate(from: number, write: (s: string) => void) {
  let requests = 0;
  let started = from <= 1;
  let held: string[] = [];
  return (msg: OmniMessage) => {
    const line = JSON.stringify(msg) + "\n";
    const t = msg.type === "event_msg" ? msg.payload.type : "";
    if (msg.type === "session_meta" && requests === 0) return write(line);
    if (t === "request_begin") {
      requests++;
      if (!started && requests >= from) {
        started = true;
        write(held.join(""));
      }
      held = [];
    }
    if (started) return write(line);
    if (t === "request_end") held = [];
    else held.push(line);
  };
}

/** Show every session of `sessions` (see the module doc). */
export async function showSessions(
  sessions: readonly SessionFiles[],
  options: ShowOptions,
): Promise<void> {
  let buf = "";
  const write = (text: string) => {
    if (text === "") return;
    buf += text;
    if (buf.length >= FLUSH_AT) flush();
  };
  const flush = () => {
    if (buf === "") return;
    const b = buf;
    buf = "";
    options.out(b);
  };
  const metaCache = new Map<string, string | null>();
  const visited = new Set<string>();

  const showOne = async (session: SessionFiles, depth: number, childId?: string) => {
    visited.add(session.key);
    const indent = "  ".repeat(depth);
    const renderer = createRenderer({
      style: options.style,
      full: options.full,
      indent,
      childSessionId: childId,
      fromRequest: depth === 0 ? options.fromRequest : undefined,
    });
    const gate = options.json ? jsonGate(depth === 0 ? options.fromRequest ?? 1 : 1, write) : null;
    for (const file of session.files) {
      const problems: TraceProblem[] = [];
      for await (
        const { message } of readTrace(file.path, {
          onProblem: keepProblem(problems),
          mask: options.mask,
        })
      ) {
        if (gate) gate(message);
        // The file's path masked as its records are: it is named after the session's id, which
        // may hold a value set as a secret since (attack round 25 secrets B3).
        else write(renderer.record(message, maskedText(options.mask, file.path)));
        if (
          options.children && message.type === "event_msg" &&
          message.payload.type === "subagent"
        ) {
          const id = String(message.payload.session_id);
          if (visited.has(id) || depth + 1 > MAX_DEPTH) continue;
          const child = await findRelative(file.path, id, metaCache);
          if (!child) {
            if (!gate) {
              write(
                `${indent}  ${
                  options.style.dim(`(child trace ${id} not found near ${file.path})`)
                }\n`,
              );
            }
            continue;
          }
          await showOne(child, depth + 1, id);
        }
      }
      const notice = skippedLinesNotice(file.path, problems, problemsLeftOut(problems, file.path));
      if (notice) {
        flush();
        options.err(notice + "\n");
      }
    }
  };

  let first = true;
  for (const session of sessions) {
    if (!first && !options.json) write("\n");
    first = false;
    await showOne(session, 0);
  }
  flush();
}
