// The summarize requests of a compaction: attempts on
// the session's model with the session's tool list, each bracketed by
// request_begin / request_end, until one completes with a usable summary.
//
// Trace discipline: everything an attempt sends that the replay would not
// already hold as pending input is written before its request_begin (the
// prompt, the corrective note, the repair outputs), so a resumed session
// rebuilds exactly the context this process had. Raw messages and request
// events go to the trace only; the caller's stream gets the summary's
// partial_text fragments and each attempt's token_usage.
import { eventMsg, modelMsg, toolCallOutput, userText } from "../protocol/builders.ts";
import type {
  CompleteMessage,
  OmniMessage,
  ToolCallMessage,
  ToolCallOutputMessage,
} from "../protocol/types.ts";
import { isComplete } from "../protocol/guards.ts";
import type { ModelOutcome, ModelStreamItem } from "../models/outcome.ts";
import { shouldRetry } from "../models/retry.ts";
import { extractSummary } from "../session/summary.ts";
import type { Engine, EngineRequest } from "./engine.ts";

/** Output fed back for a tool call made by a compaction request. */
export const COMPACTION_TOOL_ERROR =
  "[tool error] the compaction request expects a summary, not tool calls";

/** What the attempts need. */
export interface SummarizeDeps {
  /** The session's engine (context, usage counters, retry waits). */
  engine: Engine;
  /** Send one request (the session's model, tool list included). */
  request(req: EngineRequest, signal: AbortSignal | undefined): AsyncIterable<ModelStreamItem>;
  /** Best-effort trace sink. */
  record(msg: OmniMessage): void;
  /** The compaction prompt. */
  prompt: string;
  /** The corrective note of a repair attempt. */
  retryNote: string;
  /** Retries after the first attempt (shared ladder with turns). */
  maxRetries: number;
  /**
   * Wait before retry `n` (default 2 s, 4 s, 8 s, 16 s, 30 s, or a server's
   * Retry-After up to 60 s).
   */
  retryDelayMs?: (n: number) => number;
}

/** How the attempts ended. */
export interface SummarizeOutcome {
  /** Final status. */
  status: "completed" | "failed" | "aborted";
  /** The summary (completed only). */
  summary?: string;
  /** Attempts made. */
  attempt: number;
  /** Why it failed. */
  error_message?: string;
  /** Whether some attempt completed (its input and output joined the context). */
  committed: boolean;
  /** Repair outputs owed to the last committed attempt's tool calls (already written). */
  stash: ToolCallOutputMessage[];
}

interface Attempt {
  outcome: ModelOutcome;
  completes: CompleteMessage[];
  text: string;
  calls: ToolCallMessage[];
}

/**
 * Run summarize attempts over `lead` (inputs owed to the context, e.g. the
 * last turn's tool outputs, already written or never to be written) plus
 * the prompt.
 */
export async function* summarize(
  deps: SummarizeDeps,
  lead: readonly CompleteMessage[],
  signal: AbortSignal | undefined,
): AsyncGenerator<OmniMessage, SummarizeOutcome> {
  const { engine } = deps;
  const prompt = userText(deps.prompt);
  let input: CompleteMessage[] = [...lead, prompt];
  let texts: CompleteMessage[] = [prompt]; // written per attempt (the replay drops them with a failed round)
  let committed = false;
  let stash: ToolCallOutputMessage[] = [];
  let lastError = "";
  for (let attempt = 1;; attempt++) {
    for (const m of texts) deps.record(modelMsg(m));
    const res: Attempt = yield* oneAttempt(deps, input, signal, attempt);
    const { outcome } = res;
    if (signal?.aborted || outcome.status === "aborted") {
      return { status: "aborted", attempt, committed, stash };
    }
    const last = attempt > deps.maxRetries;
    if (outcome.status === "completed") {
      engine.commit(input, res.completes);
      committed = true;
      const summary = extractSummary(res.text);
      if (summary !== "" && res.calls.length === 0) {
        return { status: "completed", summary, attempt, committed, stash: [] };
      }
      stash = res.calls.map((c) => toolCallOutput(c.tool_call_id, COMPACTION_TOOL_ERROR, "failed"));
      for (const o of stash) deps.record(modelMsg(o));
      lastError = res.calls.length > 0
        ? "the compaction reply called tools instead of answering with a summary"
        : "the compaction reply had no summary";
      if (last) return { status: "failed", attempt, error_message: lastError, committed, stash };
      texts = [userText(deps.retryNote), prompt];
      input = [...stash, ...texts];
      continue;
    }
    lastError = outcome.error_message ?? outcome.status;
    const wait = retryDelay(deps, outcome, attempt);
    if (wait === undefined) {
      return { status: "failed", attempt, error_message: lastError, committed, stash };
    }
    if (!(await engine.retryWait(wait, signal))) {
      return { status: "aborted", attempt, committed, stash };
    }
  }
}

function retryDelay(
  deps: SummarizeDeps,
  outcome: ModelOutcome,
  attempt: number,
): number | undefined {
  if (attempt > deps.maxRetries) return undefined;
  const verdict = shouldRetry(outcome, attempt);
  if (!verdict.retry) return undefined;
  return deps.retryDelayMs ? deps.retryDelayMs(attempt) : verdict.delay_ms;
}

async function* oneAttempt(
  deps: SummarizeDeps,
  input: CompleteMessage[],
  signal: AbortSignal | undefined,
  attempt: number,
): AsyncGenerator<OmniMessage, Attempt> {
  const { engine } = deps;
  const res: Attempt = { outcome: { status: "completed" }, completes: [], text: "", calls: [] };
  let streamedText = false;
  deps.record(eventMsg({ type: "request_begin" }));
  const began = performance.now();
  let firstChunkMs: number | undefined;
  try {
    for await (const item of deps.request(engine.requestFor(input), signal)) {
      if (item.kind === "usage") {
        const s = engine.state.sessionTokens;
        s.cache_read += item.usage.cache_read;
        s.cache_write += item.usage.cache_write;
        s.output += item.usage.output;
        s.total += item.usage.total;
        engine.state.lastRequestTotal = item.usage.total;
        const usage = eventMsg({ type: "token_usage", session: { ...s }, request: item.usage });
        deps.record(usage);
        yield usage;
        continue;
      }
      if (item.kind === "end") {
        res.outcome = item.outcome;
        break;
      }
      const p = item.message;
      firstChunkMs ??= Math.round(performance.now() - began);
      deps.record(modelMsg(p));
      if (p.type === "partial_text") {
        if (p.text !== "") streamedText = true;
        yield modelMsg(p);
        continue;
      }
      if (!isComplete(p)) continue;
      res.completes.push(p);
      if (p.type === "text") res.text += p.text;
      if (p.type === "tool_call" && p.stop_reason === "completed") res.calls.push(p);
    }
  } catch (err) {
    // The model layer never throws; a last-resort guard.
    res.outcome = { status: "failed", error_message: String(err) };
  }
  const o = res.outcome;
  const end: Record<string, unknown> = { type: "request_end", status: o.status };
  if (o.status !== "completed") end.error_message = o.error_message ?? o.status;
  if (o.status !== "completed" || attempt > 1) end.attempt = attempt;
  const wait = o.status === "completed" ? undefined : retryDelay(deps, o, attempt);
  if (wait !== undefined) end.retry_in_ms = wait;
  if (firstChunkMs !== undefined) end.first_token_ms = firstChunkMs;
  deps.record(eventMsg(end as { type: "request_end"; status: typeof o.status }));
  if (o.status === "completed" && !streamedText) {
    for (const m of res.completes) if (m.type === "text") yield modelMsg(m);
  }
  return res;
}
