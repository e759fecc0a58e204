// The steps every foreign session parser shares: splitting the file into
// JSON lines (a malformed one is a `file:line` problem), the session being
// built with its transcript and loss book, zod issues in one line, and the
// assistant content Claude Code and pi record alike (text, thinking with a
// provider signature, tool calls).
import { z } from "zod";
import type { CompleteMessage } from "../protocol/types.ts";
import { type At, createTranscript, type Transcript } from "./_transcript.ts";
import {
  type ForeignLine,
  type ForeignSession,
  type ForeignText,
  type Harness,
  lazyJsonLines,
  type RecordSink,
} from "./foreign_session.ts";
import { createLossBook, type LossBook } from "./import_report.ts";

/** One parse of a foreign file: its lines, the session built, its transcript and loss book. */
export interface ForeignParse {
  /** The file's parsable JSON lines, parsed again on each iteration (never held). */
  lines: Iterable<ForeignLine>;
  /** The session being built (records and loss are filled by {@linkcode finishForeignParse}). */
  s: ForeignSession;
  /** The transcript its records go to. */
  t: Transcript;
  /** What could not be mapped. */
  loss: LossBook;
  /** Report a malformed line. */
  bad(line: number, reason: string): void;
  /** Note an unmapped record at `line`. */
  lost(line: number, kind: string, reason: string): void;
}

/**
 * Start parsing `text` of `file`, a session of `harness` whose provider is
 * `provider` until recorded. With `sink`, the records go there as they are
 * made instead of into the session's `records`.
 */
export function startForeignParse(
  text: ForeignText,
  file: string,
  harness: Harness,
  provider: string,
  sink?: RecordSink,
): ForeignParse {
  const { lines, problems } = lazyJsonLines(text, file);
  const loss = createLossBook();
  const s: ForeignSession = {
    harness,
    file,
    id: "",
    version: null,
    cwd: "",
    provider,
    modelId: "unknown",
    systemPrompt: "",
    startedAt: "",
    records: [],
    children: [],
    loss: [],
    problems,
  };
  return {
    lines,
    s,
    t: createTranscript(file, loss, sink),
    loss,
    bad: (line, reason) => problems.push({ file, line, reason }),
    lost: (line, kind, reason) => loss.note(kind, file, line, reason),
  };
}

/** Close the transcript and return the session with its records and loss report. */
export function finishForeignParse(p: ForeignParse): ForeignSession {
  p.s.records = p.t.finish();
  p.s.loss = p.loss.entries();
  return p.s;
}

/** The first issue of a zod error, `path: message`. */
export function issue(err: z.ZodError): string {
  const i = err.issues[0];
  return i ? `${i.path.join(".") || "record"}: ${i.message}` : "unexpected shape";
}

/** The text of content parts (text parts joined by newlines) and the types of the other parts. */
export function textParts(
  parts: ReadonlyArray<{ type: string }>,
): { text: string; other: string[] } {
  const texts: string[] = [];
  const other: string[] = [];
  for (const p of parts) {
    const t = (p as { text?: unknown }).text;
    if (p.type === "text" && typeof t === "string") texts.push(t);
    else other.push(p.type);
  }
  return { text: texts.join("\n"), other };
}

/** How a harness records the parts of an assistant message. */
export interface AssistantPartForm {
  /** The type of a tool call part (`tool_use`, `toolCall`). */
  toolCall: string;
  /** The shape of a tool call part: `id`, `name` and its arguments field (present, any value). */
  callSchema: z.ZodType<{ id: string; name: string }>;
  /** The field of a tool call part holding its arguments (`input`, `arguments`). */
  args: string;
  /** The field of a thinking part holding its signature. */
  signature: string;
  /** What the harness calls a part, for the loss report (`content block`, `content part`). */
  noun: string;
}

/**
 * Add one assistant content part (text, thinking, tool call) to the open
 * request `requestKey`; anything else is noted as lost. Returns the tool
 * call it added, if any.
 */
export function assistantPart(
  p: ForeignParse,
  part: { type: string } & Record<string, unknown>,
  at: At,
  requestKey: string | undefined,
  form: AssistantPartForm,
): { id: string; name: string } | null {
  const add = (msg: CompleteMessage) => p.t.assistant(msg, at, requestKey);
  if (part.type === "text" && typeof part.text === "string") {
    add({ type: "text", role: "assistant", text: part.text, stop_reason: "completed" });
  } else if (part.type === "thinking" && typeof part.thinking === "string") {
    const signature = part[form.signature];
    if (typeof signature === "string" && signature !== "") {
      p.lost(
        at.line,
        "thinking signature",
        "valid only with the provider that signed it; the thinking text is kept",
      );
    }
    add({ type: "thinking", role: "assistant", thinking: part.thinking, stop_reason: "completed" });
  } else if (part.type === form.toolCall) {
    const c = form.callSchema.safeParse(part);
    if (!c.success) {
      p.bad(at.line, `${form.toolCall}: ${issue(c.error)}`);
      return null;
    }
    add({
      type: "tool_call",
      role: "assistant",
      name: c.data.name,
      arguments: JSON.stringify(part[form.args] ?? {}),
      tool_call_id: c.data.id,
      stop_reason: "completed",
    });
    return { id: c.data.id, name: c.data.name };
  } else {
    p.lost(
      at.line,
      `assistant content ${part.type}`,
      `no penguin counterpart for this ${form.noun}`,
    );
  }
  return null;
}
