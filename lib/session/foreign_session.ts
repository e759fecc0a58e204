/**
 * A session recorded by another harness (OpenAI Codex CLI, Claude Code, pi),
 * turned into penguin trace records by one of the `import_*` parsers: the
 * pure half of `penguin sessions import --from`. Writing it is
 * `importForeign`'s job.
 *
 * @module
 */
import type { EventMsgEnvelope, ModelMsgEnvelope } from "../protocol/types.ts";
import type { LineProblem, LossEntry } from "./import_report.ts";

/** The harnesses penguin imports from. */
export type Harness = "codex" | "claude" | "pi";

/** Every {@linkcode Harness}. */
export const HARNESSES: readonly Harness[] = ["codex", "claude", "pi"];

/** One JSONL line of a foreign file: its number and its parsed value. */
export interface ForeignLine {
  /** 1-based line number. */
  line: number;
  /** The parsed JSON value. */
  value: unknown;
}

/** A foreign session, converted. */
export interface ForeignSession {
  /** The harness that recorded it. */
  harness: Harness;
  /** The file it was read from. */
  file: string;
  /** Its id in that harness. */
  id: string;
  /** The harness's version, when recorded. */
  version: string | null;
  /** The working directory it ran in. */
  cwd: string;
  /** Provider of the recorded model (`unknown` when not recorded). */
  provider: string;
  /** The recorded model id (`unknown` when not recorded). */
  modelId: string;
  /** The system prompt, when the harness recorded it; else empty. */
  systemPrompt: string;
  /** Time of its first record (ISO-8601). */
  startedAt: string;
  /** The trace records after the session_meta, each with its recorded time. */
  records: Array<ModelMsgEnvelope | EventMsgEnvelope>;
  /** Subagent sessions it spawned whose transcripts were found (Claude Code). */
  children: ForeignChild[];
  /** What could not be mapped. */
  loss: LossEntry[];
  /** Malformed lines (skipped; the import is refused unless lenient). */
  problems: LineProblem[];
}

/** A subagent session and the tool call of its parent that spawned it. */
export interface ForeignChild {
  /** The parent's tool call. */
  toolCallId: string;
  /** The child session. */
  session: ForeignSession;
}

/** Parse JSONL text into lines; blank lines are skipped, malformed JSON becomes a problem. */
export function splitJsonLines(
  text: string,
  file: string,
): { lines: ForeignLine[]; problems: LineProblem[] } {
  const lines: ForeignLine[] = [];
  const problems: LineProblem[] = [];
  const raw = text.split("\n");
  raw.forEach((s, i) => {
    if (s.trim() === "") return;
    try {
      lines.push({ line: i + 1, value: JSON.parse(s) });
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      const torn = i === raw.length - 1 ? " (the file ends in a partial line)" : "";
      problems.push({ file, line: i + 1, reason: `not valid JSON: ${why}${torn}` });
    }
  });
  return { lines, problems };
}
