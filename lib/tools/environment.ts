/**
 * The central execution framing of a tool call. `executeTool` turns
 * one approved `tool_call` into `partial_tool_call_output` start / delta* /
 * stop and a complete `tool_call_output`, whatever the tool does: unknown
 * names, bad argument JSON, thrown errors, hangs, user aborts and timeouts all
 * become an output the model can read. It never throws.
 *
 * Invariants: the output is never empty (`[no output]`), the concatenated
 * deltas equal the final output, images are delivered only on `completed`.
 *
 * Secrets: every vault value of the session (`ctx.vault`,
 * `ctx.sandbox.env.vault`) and every secret in `ctx.secrets` (API keys) is
 * masked in the tool's text as it streams (see `secret_mask.ts`), before
 * truncation, the archive, the notes and the output; the tool's own view is
 * unchanged.
 *
 * Memory: only the forwarded head (at most `maxOutputLength` chars, and
 * never more than {@linkcode HELD_OUTPUT_LIMIT}, also when `maxOutputLength`
 * is `<= 0` or larger) and the archive writer's two blocks are held; the rest
 * goes to the archive file as it arrives (its tail too, `_archive_tail.ts`),
 * and a step's value is dropped once handled.
 *
 * @module
 */
import { partialToolOutput, toolCallOutput } from "../protocol/builders.ts";
import { onAbort } from "../protocol/abort.ts";
import { defaultWarn, errorMessage } from "../protocol/errors.ts";
import type {
  OmniMessage,
  PartialToolCallOutput,
  StopReason,
  ToolCallMessage,
  ToolCallOutputMessage,
  ToolProcessFacts,
  ToolSubagentFacts,
} from "../protocol/types.ts";
import { ARCHIVE_LIMIT_BYTES, type ArchiveWriter, safeCut, startArchive } from "./_archive.ts";
import { createSecretMasker, maskSecrets, type Secret, vaultSecrets } from "./secret_mask.ts";
import type { ToolContext } from "./context.ts";
import {
  imageDataBytes,
  PROCESS_IMAGES_MAX_BYTES,
  PROCESS_IMAGES_NOTE,
  RESPONSE_IMAGES_MAX_BYTES,
  RESPONSE_IMAGES_NOTE,
} from "../protocol/image_data.ts";
import { holdImages, imagesHeldBesides } from "./image_ledger.ts";
import type { ImageClaim, Tool, ToolEvent } from "./tool.ts";

/** The note that stands for an image a tool returned whose data holds a secret. */
export const SECRET_IMAGE_NOTE = "[image refused: its data holds a secret]";
/** Status note of a call the user aborted. */
export const ABORTED_NOTE = "[interrupted: tool aborted by user]";

/**
 * The most characters of a call's output held and forwarded, whatever the
 * tool's `maxOutputLength` (`<= 0` lifts only the tool's own cap): past it
 * the output is truncated and archived like any other (8 Mi characters, the
 * bound of a model response's text).
 */
export const HELD_OUTPUT_LIMIT = 8 * 1024 * 1024;

/** The output cap of a tool whose definition sets `max`: at most {@linkcode HELD_OUTPUT_LIMIT}. */
function heldOutputCap(max: number): number {
  return max > 0 && max < HELD_OUTPUT_LIMIT ? max : HELD_OUTPUT_LIMIT;
}

/** Output of a call that produced no text and no notes. */
export const NO_OUTPUT = "[no output]";

/** A child-session message a tool forwarded; the caller streams it but never records or feeds it back. */
export interface ForwardedMessage {
  /** Item discriminator (not a payload type). */
  type: "forwarded";
  /** The origin-tagged envelope, untouched. */
  message: OmniMessage;
}

/** What `executeTool` yields: this call's partials and complete output, plus forwarded child messages. */
export type ToolExecutionItem = PartialToolCallOutput | ToolCallOutputMessage | ForwardedMessage;

/** The session facts `executeTool` passes on to the tool. */
export interface ExecutionContext extends Omit<ToolContext, "toolCallId" | "signal"> {
  /** The user's abort signal. */
  signal?: AbortSignal | undefined;
}

/** Every secret a call's output is masked for: the vault values first, then `ctx.secrets`. */
export function secretsOf(ctx: Pick<ToolContext, "vault" | "sandbox" | "secrets">): Secret[] {
  return [
    ...vaultSecrets(ctx.vault),
    ...vaultSecrets(ctx.sandbox?.env.vault),
    ...(ctx.secrets ?? []),
  ];
}

/** Knobs of `executeTool`; the defaults are the production behaviour. */
export interface ExecuteOptions {
  /** After an abort or timeout, how long to wait for the tool to wind down before abandoning it (ms). */
  abortGraceMs?: number;
  /** Archive file size limit in bytes (tests shrink it). */
  archiveLimitBytes?: number;
  /** Where diagnostics go (default: stderr). */
  warn?: (line: string) => void;
  /** Called with the archive writer when one starts (tests observe its bounded memory). */
  onArchive?: (writer: ArchiveWriter) => void;
  /**
   * The image data the calls of this call's model response returned so far,
   * shared by them: an image past {@linkcode RESPONSE_IMAGES_MAX_BYTES} in
   * all is left out with {@linkcode RESPONSE_IMAGES_NOTE}. Absent: no bound.
   */
  responseImages?: ResponseImages;
}

/** The images of one model response's tool calls, shared by the calls. */
export interface ResponseImages {
  /** Names the response to the tools (`responseId`): a tool host bounds its images before reading them. */
  id: string;
  /** Bytes of image data the calls returned so far. */
  bytes: number;
  /**
   * Bytes the calls still running claimed before reading them (`claimImage`): counted for the
   * process's other conversations until the call delivers them, so images read at once by many
   * conversations (background subagents) never pass the process bound on their way.
   */
  reserved?: number;
  /** Bytes claimed for the process's bound alone (held while a call runs, never returned). */
  inFlight?: number;
}

/** What counts against what `response`'s calls may return together: returned and claimed. */
const countedOf = (response: ResponseImages) => response.bytes + (response.reserved ?? 0);

/** What `response` counts for the process's other conversations: that, and what is in flight. */
const heldOf = (response: ResponseImages) => countedOf(response) + (response.inFlight ?? 0);

/**
 * A call's claims of image data before a tool reads it (`FileToolContext.claimImage`): granted
 * while the response's images and the process's stay within their bounds; `settle` gives back
 * what the call claimed once it has ended (what it delivered is counted by `imagesWithin`).
 */
function imageClaims(response: ResponseImages) {
  let claimed = 0;
  let inFlight = 0;
  let settled = false;
  return {
    claim(bytes: number, processOnly = false): Promise<ImageClaim> {
      if (settled) return Promise.resolve("response");
      if (!processOnly && countedOf(response) + bytes > RESPONSE_IMAGES_MAX_BYTES) {
        return Promise.resolve("response");
      }
      if (heldOf(response) + bytes > PROCESS_IMAGES_MAX_BYTES - imagesHeldBesides(response)) {
        return Promise.resolve("process");
      }
      if (processOnly) {
        inFlight += bytes;
        response.inFlight = (response.inFlight ?? 0) + bytes;
      } else {
        claimed += bytes;
        response.reserved = (response.reserved ?? 0) + bytes;
      }
      holdImages(response, heldOf(response));
      return Promise.resolve(true);
    },
    settle(): void {
      settled = true;
      response.reserved = (response.reserved ?? 0) - claimed;
      response.inFlight = (response.inFlight ?? 0) - inFlight;
      claimed = 0;
      inFlight = 0;
      holdImages(response, heldOf(response));
    },
  };
}

/**
 * The images a completed call delivers: those within what the calls of its
 * response may return together and what the process's other conversations
 * leave of {@linkcode PROCESS_IMAGES_MAX_BYTES} (in the order they come), the
 * rest each replaced by a note.
 */
function imagesWithin(
  images: string[],
  response: ResponseImages | undefined,
  notes: string[],
): string[] {
  if (response === undefined) return images;
  const kept: string[] = [];
  for (const url of images) {
    const bytes = imageDataBytes(url);
    if (countedOf(response) + bytes > RESPONSE_IMAGES_MAX_BYTES) notes.push(RESPONSE_IMAGES_NOTE);
    else if (heldOf(response) + bytes > PROCESS_IMAGES_MAX_BYTES - imagesHeldBesides(response)) {
      notes.push(PROCESS_IMAGES_NOTE);
    } else {
      response.bytes += bytes;
      kept.push(url);
    }
  }
  // Counted for the process's other conversations until the response's calls are all done.
  holdImages(response, heldOf(response));
  return kept;
}

const DEFAULT_GRACE_MS = 2000;

/** A `partial_tool_call_output` payload (the protocol builder, re-exported). */
export { partialToolOutput };

/** The explanation for arguments that are not a JSON object, or undefined when they parse to one. */
export function describeArgumentsProblem(name: string, raw: string): string | undefined {
  if (raw.trim() === "") {
    return `Tool call "${name}" failed: the arguments field is empty. Re-issue the call with a complete JSON object.`;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    return `Tool call "${name}" failed: the arguments are not valid JSON (${
      errorMessage(err)
    }). Re-issue the call with one complete, valid JSON object.`;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    const got = parsed === null
      ? "null"
      : Array.isArray(parsed)
      ? "an array"
      : `a ${typeof parsed}`;
    return `Tool call "${name}" failed: the arguments are ${got}, not a JSON object. Re-issue the call with one JSON object of named parameters.`;
  }
  return undefined;
}

function* failure(toolCallId: string, message: string): Generator<ToolExecutionItem> {
  yield partialToolOutput("delta", toolCallId, message);
  yield partialToolOutput("stop", toolCallId, "", "failed");
  yield toolCallOutput(toolCallId, message, "failed");
}

/** The signals of one call: the user's abort or the timeout, and abandonment after the grace period. */
interface CallSignals {
  /** The tool's signal. */
  signal: AbortSignal;
  /** The timeout fired. */
  timedOut(): boolean;
  /** The grace period after an abort ran out: stop waiting for the tool. */
  abandoned(): boolean;
  /** Wait for `next`, or for abandonment, whichever comes first. */
  step<T>(next: Promise<T>): Promise<T | "abandoned">;
  /** Clear the timers. */
  dispose(): void;
}

function callSignals(userSignal: AbortSignal | undefined, timeoutMs: number, graceMs: number) {
  const timeout = new AbortController();
  const signal = userSignal ? AbortSignal.any([userSignal, timeout.signal]) : timeout.signal;
  let timedOut = false;
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  // Abandonment wakes the one pending step (never a long-lived promise: a
  // race against one would keep a reaction, and so every step value, alive).
  let abandoned = false;
  let wakeStep: (() => void) | undefined;
  const offGrace = onAbort(signal, () => {
    graceTimer = setTimeout(() => {
      abandoned = true;
      wakeStep?.();
    }, graceMs);
  });
  const timer = timeoutMs > 0
    ? setTimeout(() => {
      timedOut = true;
      timeout.abort(new DOMException(`tool timeout: exceeded ${timeoutMs}ms`, "TimeoutError"));
    }, timeoutMs)
    : undefined;
  const signals: CallSignals = {
    signal,
    timedOut: () => timedOut,
    abandoned: () => abandoned,
    async step<T>(next: Promise<T>): Promise<T | "abandoned"> {
      next.catch(() => {}); // a late rejection after abandonment must not go unhandled
      try {
        return await new Promise<T | "abandoned">((resolve, reject) => {
          wakeStep = () => resolve("abandoned");
          next.then(resolve, reject);
        });
      } finally {
        wakeStep = undefined;
      }
    },
    dispose() {
      clearTimeout(timer);
      offGrace();
      clearTimeout(graceTimer);
    },
  };
  return signals;
}

/** The forwarded head of a call's output and, past the cap, its archive. */
interface OutputSink {
  /** Count masked `text`, archive it when over the cap, and return the part to forward (if any). */
  accept(text: string): Promise<string | undefined>;
  /** Forwarded content, at most the cap. */
  readonly streamed: string;
  /** Chars the tool produced (masked). */
  readonly produced: number;
  /** The archive, once the output went over the cap. */
  readonly archive: ArchiveWriter | undefined;
}

function outputSink(
  call: ToolCallMessage,
  max: number,
  scratchpad: string | undefined,
  archiveLimit: number,
  onArchive: ((archive: ArchiveWriter) => void) | undefined,
): OutputSink {
  let streamed = "";
  let produced = 0;
  let archive: ArchiveWriter | undefined;
  return {
    get streamed() {
      return streamed;
    },
    get produced() {
      return produced;
    },
    get archive() {
      return archive;
    },
    async accept(text) {
      if (text.length === 0) return undefined;
      produced += text.length;
      if (produced > max && scratchpad !== undefined) {
        if (!archive) {
          archive = startArchive(scratchpad, call.name, call.tool_call_id, archiveLimit);
          onArchive?.(archive);
          await archive.append(streamed);
        }
        await archive.append(text);
      }
      const room = max - streamed.length;
      if (room <= 0) return undefined;
      const chunk = text.length > room ? text.slice(0, safeCut(text, room)) : text;
      if (chunk.length === 0) return undefined;
      streamed += chunk;
      return chunk;
    },
  };
}

/** What the tool said about itself besides its text. */
interface SelfReport {
  images: string[];
  status?: StopReason;
  note?: string;
  process?: ToolProcessFacts;
  subagent?: ToolSubagentFacts;
  thrown?: { error: unknown };
}

/** How the call ended, frozen before any archive I/O: an abort arriving later changes nothing. */
function verdict(
  self: SelfReport,
  userSignal: AbortSignal | undefined,
  timedOut: boolean,
  timeoutMs: number,
): { status: StopReason; note?: string } {
  const userAborted = userSignal?.aborted === true ||
    (!timedOut &&
      (self.status === "aborted" ||
        (self.thrown?.error as Error | undefined)?.name === "AbortError"));
  if (userAborted) return { status: "aborted", note: ABORTED_NOTE };
  if (timedOut) return { status: "failed", note: `[tool timeout: exceeded ${timeoutMs}ms]` };
  if (self.thrown) {
    return { status: "failed", note: `[tool error] ${errorMessage(self.thrown.error)}` };
  }
  return { status: self.status ?? "completed" };
}

/** The note lines after the output: truncation and archive, the tool's note, the status note. */
async function closingNotes(
  call: ToolCallMessage,
  sink: OutputSink,
  max: number,
  archiveLimit: number,
  selfNote: string | undefined,
  statusNote: string | undefined,
  warn: (line: string) => void,
): Promise<string[]> {
  const notes: string[] = [];
  if (sink.produced > sink.streamed.length) {
    notes.push(`[output truncated: exceeded ${max} chars]`);
    const archive = sink.archive;
    if (archive) {
      const saved = await archive.finish();
      if (saved.ok && saved.truncated) {
        const mib = Math.ceil(archiveLimit / (1024 * 1024));
        notes.push(`[output archived (${mib} MiB limit; head and tail kept): ${saved.path}]`);
      } else if (saved.ok) notes.push(`[output archived: ${saved.path}]`);
      else {
        notes.push(`[output archive failed: ${saved.code}]`);
        warn(
          `[penguin] tool "${call.name}" truncated output archive write failed (${saved.code}).`,
        );
      }
    }
  }
  if (selfNote) notes.push(selfNote);
  if (statusNote) notes.push(statusNote);
  if (sink.streamed === "" && notes.length === 0) notes.push(NO_OUTPUT);
  return notes;
}

/**
 * Run the tool to its end (or abandonment), yielding the deltas to forward
 * and the forwarded child messages; what it said about itself lands in `self`.
 */
async function* pumpTool(
  iterator: AsyncIterator<ToolEvent>,
  call: ToolCallMessage,
  signals: CallSignals,
  accept: (text: string) => Promise<string | undefined>,
  self: SelfReport,
  warn: (line: string) => void,
): AsyncGenerator<ToolExecutionItem, boolean, undefined> {
  const id = call.tool_call_id;
  while (!signals.abandoned()) {
    const step = await signals.step(iterator.next());
    if (step === "abandoned") return true;
    if (step.done) return false;
    const event = step.value;
    if (event.type === "delta") {
      const text = event.text;
      if (typeof text !== "string" || text.length === 0) continue;
      const chunk = await accept(text);
      if (chunk !== undefined) yield partialToolOutput("delta", id, chunk);
    } else if (event.type === "images") {
      if (Array.isArray(event.images)) {
        self.images = self.images.concat(event.images.filter((u) => typeof u === "string"));
      }
    } else if (event.type === "forward") {
      if (Array.isArray(event.message.origin) && event.message.origin.length > 0) {
        yield { type: "forwarded", message: event.message };
      } else warn(`[penguin] tool "${call.name}" forwarded a message without origin; ignored.`);
    } else if (event.type === "result") {
      if (event.status) self.status = event.status;
      if (event.note) self.note = event.note;
      if (event.process) self.process = { ...event.process };
      if (event.subagent) self.subagent = { ...event.subagent };
    }
  }
  return true;
}

/**
 * Execute one approved tool call. `tool` is the registry lookup for
 * `call.name` (undefined → `Unknown tool: <name>`). Yields this call's
 * partials, forwarded child messages, and last the complete output.
 */
export async function* executeTool(
  tool: Tool<ToolContext> | undefined,
  call: ToolCallMessage,
  ctx: ExecutionContext,
  opts: ExecuteOptions = {},
): AsyncGenerator<ToolExecutionItem, void, undefined> {
  const id = call.tool_call_id;
  const warn = opts.warn ?? defaultWarn;
  const secrets = secretsOf(ctx);
  yield partialToolOutput("start", id);
  if (!tool) {
    yield* failure(id, maskSecrets(`Unknown tool: ${call.name}`, secrets));
    return;
  }
  const problem = describeArgumentsProblem(call.name, call.arguments);
  if (problem !== undefined) {
    yield* failure(id, maskSecrets(problem, secrets));
    return;
  }
  const args = JSON.parse(call.arguments) as Record<string, unknown>;
  const { timeoutMs } = tool.definition;
  const max = heldOutputCap(tool.definition.maxOutputLength);
  // One signal for the tool: the user's abort or the timeout.
  const signals = callSignals(ctx.signal, timeoutMs, opts.abortGraceMs ?? DEFAULT_GRACE_MS);
  const masker = createSecretMasker(secrets);
  const archiveLimit = opts.archiveLimitBytes ?? ARCHIVE_LIMIT_BYTES;
  const sink = outputSink(call, max, ctx.scratchpad, archiveLimit, opts.onArchive);
  const self: SelfReport = { images: [] };
  let iterator: AsyncIterator<ToolEvent> | undefined;
  let open = true; // false once the tool finished, threw or was abandoned
  // What a tool claims before reading an image (a tool host asks across its wire).
  const claims = opts.responseImages ? imageClaims(opts.responseImages) : undefined;
  try {
    const responseId = opts.responseImages?.id;
    const runCtx = { ...ctx, toolCallId: id, signal: signals.signal };
    iterator = tool.run(
      args,
      responseId === undefined || claims === undefined
        ? runCtx
        : { ...runCtx, responseId, claimImage: claims.claim },
    )[Symbol.asyncIterator]();
    open = yield* pumpTool(iterator, call, signals, (t) => sink.accept(masker.push(t)), self, warn);
    // (abandoned: still open, left to clean up below)
  } catch (err) {
    open = false;
    self.thrown = { error: err };
  } finally {
    // Abandoned after an abort, or our consumer stopped early: let the tool clean up in the background.
    if (open) iterator?.return?.()?.catch(() => {});
    signals.dispose();
  }
  // The text held back in case it started a secret is output too.
  const rest = await sink.accept(masker.flush());
  if (rest !== undefined) yield partialToolOutput("delta", id, rest);
  const { status, note } = verdict(self, ctx.signal, signals.timedOut(), timeoutMs);
  const notes = await closingNotes(call, sink, max, archiveLimit, self.note, note, warn);
  // An image whose data holds a secret (a command wrote the value into a PNG a tool then read)
  // is refused, as an MCP server's is: a data URL is not masked as text (attack round 18b).
  // The claims give way to what was delivered (a tool still running after an abort delivers
  // nothing more: its claims go too).
  claims?.settle();
  const images = self.images.filter((u) => maskSecrets(u, secrets) === u);
  for (let n = self.images.length - images.length; n > 0; n--) notes.push(SECRET_IMAGE_NOTE);
  // Images cost memory many times over on their way to the model (the trace, the request body):
  // what the calls of one response return together is bounded (attack round 19).
  self.images = status === "completed" ? imagesWithin(images, opts.responseImages, notes) : [];
  const noteText = maskSecrets(notes.join("\n"), secrets);
  const streamed = sink.streamed;
  if (noteText) yield partialToolOutput("delta", id, streamed ? `\n${noteText}` : noteText);
  const finalImages = status === "completed" && self.images.length > 0 ? self.images : undefined;
  if (finalImages) yield partialToolOutput("delta", id, "", "completed", finalImages);
  yield partialToolOutput("stop", id, "", status);
  const output = noteText ? (streamed ? `${streamed}\n${noteText}` : noteText) : streamed;
  const complete = toolCallOutput(id, output, status, finalImages);
  if (self.process) complete.penguin_process = self.process;
  if (self.subagent) complete.penguin_subagent = self.subagent;
  yield complete;
}
