/**
 * Background completion notices: the harness user text that
 * tells the model a background command (or subagent) has ended, with a
 * `[background_task_done]` block, a one-line summary and the output tail.
 *
 * Notices are data: the process registry queues them and the agent loop
 * delivers each as a harness text ({@linkcode noticeMessage}) whose
 * `penguin_notice` field says which task ended, so readers of the trace
 * need not parse the block.
 *
 * @module
 */
import { userText } from "../protocol/builders.ts";
import type { TextMessage } from "../protocol/types.ts";
import { tailOf } from "./_output_buffer.ts";

/** Characters of output a notice carries at most (the tail is kept). */
export const NOTICE_TAIL_CHARS = 4000;

/** Characters of the command (or prompt) label at most. */
export const LABEL_CHARS = 120;

/** The sentence that opens every notice block: it says the message is automatic. */
export const AUTOMATIC_NOTICE_SENTENCE =
  "This message was generated automatically by penguin, not written by the user: a task you started in the background has ended.";

/** What kind of background task ended. */
export type BackgroundTaskKind = "command" | "subagent";

/** One background completion notice, ready for the agent loop. */
export interface BackgroundNotice {
  /** `command` (exec_command with run_in_background) or `subagent`. */
  kind: BackgroundTaskKind;
  /** `proc-<8hex>` or the subagent id. */
  id: string;
  /** `completed` or `failed`. */
  status: "completed" | "failed";
  /** E.g. `exit code 2`, `terminated by signal SIGKILL`. */
  detail?: string;
  /** First line of the command or prompt, at most 120 chars. */
  label: string;
  /** The output tail as included in `text` (marker included when cut). */
  output: string;
  /** The complete user text to deliver with sender `harness`. */
  text: string;
}

/** Inputs of {@linkcode formatBackgroundNotice}. */
export interface NoticeInput {
  /** Task kind. */
  kind: BackgroundTaskKind;
  /** Task id. */
  id: string;
  /** Final status. */
  status: "completed" | "failed";
  /** Optional detail (exit code, signal, reason). */
  detail?: string;
  /** The command or prompt (its first line becomes the label). */
  command: string;
  /** Output not yet seen by the model; only the last 4000 chars are kept. */
  output: string;
}

/** First line of `text`, at most 120 chars, with an ellipsis when anything was left out. */
export function taskLabel(text: string): string {
  const trimmed = text.trim();
  const nl = trimmed.indexOf("\n");
  const first = (nl >= 0 ? trimmed.slice(0, nl) : trimmed).trimEnd();
  if (first.length > LABEL_CHARS) return `${first.slice(0, LABEL_CHARS - 1).trimEnd()}…`;
  return nl >= 0 ? `${first}…` : first;
}

/** The output as a notice carries it: at most 4000 chars, with a marker when earlier text was cut. */
export function noticeTail(output: string, max: number = NOTICE_TAIL_CHARS): string {
  if (output.length <= max) return output;
  return `[earlier output dropped: exceeded ${max} chars]\n${tailOf(output, max)}`;
}

/** Build a notice and its text. */
export function formatBackgroundNotice(input: NoticeInput): BackgroundNotice {
  const label = taskLabel(input.command);
  const output = noticeTail(input.output);
  const fields = [
    `kind: ${input.kind}`,
    `id: ${input.id}`,
    `status: ${input.status}`,
    ...(input.detail ? [`detail: ${input.detail}`] : []),
  ];
  const idName = input.kind === "command" ? "process_id" : "subagent_id";
  const verb = input.status === "completed" ? "finished" : "failed";
  const summary = `Background ${input.kind} ${verb}: \`${label}\` (${idName} ${input.id})${
    input.detail ? ` — ${input.detail}` : ""
  }`;
  const text = [
    "[background_task_done]",
    AUTOMATIC_NOTICE_SENTENCE,
    ...fields,
    "[/background_task_done]",
    summary,
    "",
    output === "" ? "[no output]" : output,
  ].join("\n");
  const notice: BackgroundNotice = {
    kind: input.kind,
    id: input.id,
    status: input.status,
    label,
    output,
    text,
  };
  if (input.detail) notice.detail = input.detail;
  return notice;
}

/**
 * The harness text that delivers `notice` (its `text`, or `text` given, e.g.
 * with secrets masked), carrying the task as `penguin_notice`.
 */
export function noticeMessage(notice: BackgroundNotice, text: string = notice.text): TextMessage {
  return {
    ...userText(text, "harness"),
    penguin_notice: { kind: notice.kind, id: notice.id, status: notice.status },
  };
}

/** Hand `notice` to each listener; one that throws does not keep it from the others. */
export function tellNoticeListeners(
  listeners: ReadonlySet<(notice: BackgroundNotice) => void>,
  notice: BackgroundNotice,
): void {
  for (const fn of [...listeners]) {
    try {
      fn(notice);
    } catch {
      // A failing listener must not lose the notice for the others.
    }
  }
}
