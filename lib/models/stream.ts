/**
 * The shared streaming driver: one model request over `fetch`, framed with
 * `eventsource-parser`, parsed by the protocol's wire module and translated
 * into OmniMessage partials and complete messages.
 *
 * Failures are values, never throws: the stream always ends with one
 * `{kind: "end", outcome}` item whose status is one of the six stop reasons
 * (./classify.ts). On a non-completed outcome open segments are closed with
 * that status and no usage is yielded.
 *
 * The steps: open the request (./_open.ts), pump its response through the
 * translator (./_pump.ts), both under one guard for the caller's abort and
 * the idle timeout (./_request_guard.ts); then close what is open and end.
 *
 * @module
 */
import type { ModelPayload } from "../protocol/types.ts";
import { classifyStreamError, describeError } from "./classify.ts";
import { failureHeadline } from "./failure.ts";
import type { ModelOutcome, ModelStreamItem } from "./outcome.ts";
import type { ToolCallIds } from "./tool_call_ids.ts";
import { createTranslator } from "./translate.ts";
import type { WireModule, WireRequest } from "./wire.ts";
import { openRequest, type RequestSite } from "./_open.ts";
import { pumpResponse } from "./_pump.ts";
import { createRequestGuard } from "./_request_guard.ts";

/** Default idle timeout between upstream events. */
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

/** Options of {@linkcode streamModel}. */
export interface StreamModelOptions {
  /** User abort: cancels the HTTP request at once; the outcome is `aborted`. */
  signal?: AbortSignal | undefined;
  /** Longest wait for the next upstream bytes (default 120000; ≤ 0 disables). */
  idleTimeoutMs?: number;
  /**
   * Longest a response may stream in all (default 30 × the idle timeout;
   * ≤ 0 disables). A response that sends events without any content for the
   * idle timeout is stopped too (./_response_clock.ts).
   */
  responseTimeoutMs?: number;
  /**
   * The clock the response's time bounds read, in ms (default
   * `performance.now`): a seam for tests that must not depend on how fast
   * the machine is.
   */
  now?: () => number;
  /** The fetch implementation (default: global `fetch`). */
  fetch?: typeof fetch | undefined;
  /** Session-wide tool-call id set (default: a fresh one per request). */
  toolCallIds?: ToolCallIds;
  /** Override the wire module chosen by `req.endpoint.protocol`. */
  module?: WireModule;
}

/**
 * Stream one model request. Yields message items (partials, and each complete
 * message right after its partial stop), then one usage item when the outcome
 * is completed, then the `end` item. Never throws.
 */
export async function* streamModel(
  req: WireRequest,
  opts: StreamModelOptions = {},
): AsyncGenerator<ModelStreamItem> {
  const translator = createTranslator(opts.toolCallIds);
  const guard = createRequestGuard(opts.signal, opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS);
  const site: RequestSite = { target: {} };
  const pending: ModelPayload[] = [];

  async function* run(): AsyncGenerator<ModelStreamItem, ModelOutcome> {
    const opened = await openRequest(req, opts, guard, site);
    if ("status" in opened) return opened;
    return yield* pumpResponse(opened, translator, guard, site, pending, {
      idleMs: opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
      responseMs: opts.responseTimeoutMs,
      now: opts.now,
    });
  }

  let outcome: ModelOutcome;
  try {
    outcome = yield* run();
  } catch (e) {
    outcome = {
      status: "failed",
      error_message: `The model stream stopped unexpectedly: ${describeError(e)}`,
    };
  } finally {
    guard.dispose();
    site.reader?.cancel().catch(() => {});
  }
  const host = site.host;
  if (outcome.status === "malformed" && host !== undefined) {
    // Name the host like every other failure (./failure.ts).
    const text = outcome.error_message ?? "unreadable response";
    if (!text.startsWith("malformed response from ")) {
      outcome.error_message = `${failureHeadline("malformed", { host })}: ${text}`;
    }
    outcome.failure = "malformed";
    outcome.host = host;
  }
  for (const m of pending.splice(0)) yield { kind: "message", message: m };
  const closing = translator.close(outcome.status);
  if (outcome.status === "completed" && translator.state.error) {
    // A call completed only now (at the end) had arguments past a limit (./translate.ts).
    outcome = classifyStreamError(translator.state.error, site.target);
  }
  for (const m of closing) yield { kind: "message", message: m };
  if (outcome.status === "completed") {
    const usage = translator.state.usage ?? { cache_read: 0, cache_write: 0, output: 0, total: 0 };
    yield { kind: "usage", usage };
  }
  if (translator.state.finish !== undefined) outcome.finish_reason ??= translator.state.finish;
  yield { kind: "end", outcome };
}
