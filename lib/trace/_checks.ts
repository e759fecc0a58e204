// File-level rules of `validateTraceFiles`. Each rule sees the valid records
// of one file in order and may report problems; add a rule by appending a
// factory to FILE_CHECKS (cross-file rules get their own list later).
import { basename } from "node:path";
import { isPartial } from "../protocol/guards.ts";
import { preview } from "../protocol/validate.ts";
import type { TraceProblem, TraceRecord } from "./reader.ts";
import { parseTraceFileName } from "./paths.ts";

/** What a rule knows about the file it checks. */
export interface CheckContext {
  /** The file, as the caller named it. */
  file: string;
  /** Require `<session_id>_<NNN>.jsonl` names for every file, not only `session-…` ones. */
  strictNames: boolean;
  /** Problems the reader found so far in this file. */
  problemsSoFar(): number;
}

/** One rule, instantiated per file. */
export interface FileCheck {
  /** See the next valid record; return the problems it shows. */
  record(rec: TraceRecord): TraceProblem[];
  /** The file ended after `lines` lines; return any last problems. */
  end(lines: number): TraceProblem[];
}

function structure(file: string, line: number, reason: string): TraceProblem {
  return { file, line, kind: "structure", reason };
}

function describe(rec: TraceRecord): string {
  const m = rec.message;
  return m.type === "session_meta"
    ? "a session_meta"
    : `a ${m.type} ${JSON.stringify(m.payload.type)}`;
}

/** The first record is a `session_meta`, and it is the only one. */
function sessionMetaFirst(ctx: CheckContext): FileCheck {
  let seen = 0;
  let firstLine = 0;
  return {
    record(rec) {
      seen++;
      if (seen === 1) {
        firstLine = rec.line;
        // A damaged line before the first record already explains the file.
        if (rec.message.type !== "session_meta" && ctx.problemsSoFar() === 0) {
          return [
            structure(
              ctx.file,
              rec.line,
              `expected a session_meta as the first record, found ${describe(rec)}`,
            ),
          ];
        }
        return [];
      }
      if (rec.message.type === "session_meta") {
        return [
          structure(
            ctx.file,
            rec.line,
            `expected one session_meta per file (at line ${firstLine}), found another`,
          ),
        ];
      }
      return [];
    },
    end(lines) {
      if (seen > 0 || ctx.problemsSoFar() > 0) return [];
      return [
        structure(
          ctx.file,
          Math.max(lines, 1),
          "expected a session_meta as the first record, found no records",
        ),
      ];
    },
  };
}

/** A file named `session-…_NNN.jsonl` (any name under strictNames) carries that session id. */
function nameMatchesSession(ctx: CheckContext): FileCheck {
  const name = basename(ctx.file);
  const parsed = parseTraceFileName(name);
  let done = false;
  return {
    record(rec) {
      if (done || rec.message.type !== "session_meta") return [];
      done = true;
      const id = rec.message.payload.session_id;
      if (!parsed) {
        if (!ctx.strictNames) return [];
        return [
          structure(
            ctx.file,
            rec.line,
            `file name: expected ${
              JSON.stringify(`${id}_NNN.jsonl`)
            } (the session_meta's session_id), found ${JSON.stringify(name)}`,
          ),
        ];
      }
      if (!ctx.strictNames && !parsed.sessionId.startsWith("session-")) return [];
      if (parsed.sessionId === id) return [];
      return [
        structure(
          ctx.file,
          rec.line,
          `session_meta.session_id: expected ${
            JSON.stringify(parsed.sessionId)
          } (from the file name), found ${JSON.stringify(id)}`,
        ),
      ];
    },
    end: () => [],
  };
}

/** Streaming fragments are never recorded. */
function noPartials(ctx: CheckContext): FileCheck {
  return {
    record(rec) {
      const m = rec.message;
      if (m.type !== "model_msg" || !isPartial(m.payload)) return [];
      return [
        structure(
          ctx.file,
          rec.line,
          `payload.type: expected a complete model message, found the streaming fragment ${
            JSON.stringify(m.payload.type)
          } (partials are never recorded)`,
        ),
      ];
    },
    end: () => [],
  };
}

/** Messages forwarded from a child session live in the child's own trace. */
function noOrigin(ctx: CheckContext): FileCheck {
  return {
    record(rec) {
      const origin = rec.message.origin;
      if (origin === undefined) return [];
      return [
        structure(
          ctx.file,
          rec.line,
          `origin: expected no origin (forwarded child messages belong to the child's trace), found ${
            preview(origin)
          }`,
        ),
      ];
    },
    end: () => [],
  };
}

/** Every per-file rule, in reporting order. */
export const FILE_CHECKS: ReadonlyArray<(ctx: CheckContext) => FileCheck> = [
  sessionMetaFirst,
  nameMatchesSession,
  noPartials,
  noOrigin,
];
