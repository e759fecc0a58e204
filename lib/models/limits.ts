/**
 * How much of one model response penguin keeps. A hostile model (or model
 * server) can stream without end; every limit here holds penguin's memory
 * to a small multiple of it however the response is cut into events.
 *
 * Past any limit the rest of the response is not read (the body is
 * cancelled): the request fails, not retried, with an error naming the
 * limit and how much came ({@linkcode TOO_LARGE_CODE}), and what was kept
 * closes as `failed` messages — a call cut off there without its arguments,
 * so no tool runs it. The same shape as a stream cut off midway, so the
 * trace stays valid and the session resumable.
 *
 * @module
 */

import { MiB } from "../protocol/format_size.ts";
import { JSON_SHAPE_LIMITS, jsonShapeProblem } from "../protocol/json_shape.ts";

/**
 * Characters of arguments one tool call may stream (2 MiB). No real model
 * writes this much in one call (the largest outputs are about 128k tokens,
 * some 0.5 MB), and a call kept costs penguin many times its arguments
 * downstream (masking, the trace, the display, the next request): a
 * 7.5 MiB `write_file` took penguin past 320 MB. Larger content is better
 * written by a command, or in parts.
 */
export const MAX_TOOL_ARGUMENTS = 2 * MiB;

/** Characters of tool-call arguments one response may keep over all its calls (4 MiB). */
export const MAX_RESPONSE_TOOL_ARGUMENTS = 4 * MiB;

/** Characters of assistant text one response may stream, over all its text segments (8 MiB). */
export const MAX_RESPONSE_TEXT = 8 * MiB;

/**
 * Characters of text, reasoning, tool-call arguments and opaque payloads
 * (signatures, encrypted reasoning) the responses one penguin process reads
 * at once may keep together (16 MiB): the bounds above hold for each
 * response, and a session's background subagents read theirs at once
 * (twelve answering 7.9 MB each took penguin to 873 MB, attack round 23
 * bounded B10). Each kept character costs the process about ten bytes on
 * its way (events, the turn's queue, masking, the trace): at 32 MiB four
 * subagents reached 386 MB, and opaque payloads, not counted, eight 15 MB
 * signatures 546 MB (attack round 24 bounded R5, R10). Past it the response
 * that passed it fails, as past the bounds of one response.
 */
export const MAX_PROCESS_RESPONSES = 16 * MiB;

/** Characters of reasoning one response may stream, over all its thinking blocks (8 MiB). */
export const MAX_RESPONSE_THINKING = 8 * MiB;

/**
 * Characters (as JSON) of opaque provider payloads — signatures, encrypted
 * reasoning, reasoning details — one response may carry (4 MiB). Under it
 * they are kept byte for byte. Real payloads are small: the recorded ones
 * are under 4 KB, and encrypted reasoning of a response's longest output
 * (about 128k tokens) well under 1 MiB. Each kept payload is held by its
 * session and costs several times its size on its way in (the event, its
 * parse, the trace record): at 16 MiB, eight subagents each answering a
 * 15 MB signature took penguin to 285-317 MB (attack round 24 bounded R10).
 */
export const MAX_RESPONSE_FIDELITY = 4 * MiB;

/**
 * Tool calls one response may make. Each call that completes runs (file
 * tools and commands, each with its own memory and processes), so a
 * response of thousands of small calls is stopped here, not by the
 * argument limits.
 */
export const MAX_RESPONSE_TOOL_CALLS = 256;

/**
 * Characters of a tool call's name, id or wire key (1024). Real names are
 * at most 64 (OpenAI) to a few hundred (an MCP server's prefix) characters,
 * ids a few dozen.
 */
export const MAX_TOOL_CALL_NAME = 1024;

/** Messages (text segments, thinking blocks, tool calls) one response may produce. */
export const MAX_RESPONSE_MESSAGES = 4096;

/** Characters one server-sent event may hold (32 MiB). */
export const MAX_SSE_EVENT = 32 * MiB;

/** Characters of a non-streamed (plain JSON) response body (32 MiB). */
export const MAX_JSON_BODY = 32 * MiB;

/**
 * Objects and arrays one event, one plain JSON body, or one tool call's
 * arguments may hold (100 000), and how deep they may nest (256): a text
 * under the byte limits can still parse into millions of small values, or
 * nest deep enough to overflow the stack. Judged before it is parsed.
 */
export const MAX_JSON_CONTAINERS = JSON_SHAPE_LIMITS.maxContainers;

/** How deep the objects and arrays of one event, body or arguments may nest (256). */
export const MAX_JSON_DEPTH = JSON_SHAPE_LIMITS.maxDepth;

/**
 * JSON values — objects, arrays, strings and keys, numbers, literals — one
 * event, one plain JSON body, or one tool call's arguments may hold
 * (200 000): one object of millions of keys is one container, yet costs
 * its parse hundreds of MB.
 */
export const MAX_JSON_VALUES = JSON_SHAPE_LIMITS.maxValues;

/**
 * JSON values the tool-call arguments of one response may hold over all its
 * calls (400 000, twice a call's, as its characters are): each call under
 * {@linkcode MAX_JSON_VALUES}, many calls still add up.
 */
export const MAX_RESPONSE_TOOL_ARGUMENT_VALUES = 2 * MAX_JSON_VALUES;

/** Error code of a response stopped at one of these limits (never retried). */
export const TOO_LARGE_CODE = "penguin_too_large";

/** Size in MiB for messages. */
export function mib(n: number): string {
  return `${n / MiB} MiB`;
}

/**
 * The {@linkcode TOO_LARGE_CODE} error of `text` (`what` names it: "an
 * event", "the body", …) when it holds more objects and arrays than
 * {@linkcode MAX_JSON_CONTAINERS}, more values than
 * {@linkcode MAX_JSON_VALUES}, or nests them deeper than
 * {@linkcode MAX_JSON_DEPTH}; `undefined` when it may be parsed.
 */
export function jsonShapeError(
  text: string,
  what: string,
): { message: string; code: string } | undefined {
  return jsonProblemError(jsonShapeProblem(text), what);
}

/** {@linkcode jsonShapeError} of a `problem` already found (./json_shape.ts), if any. */
export function jsonProblemError(
  problem: string | undefined,
  what: string,
): { message: string; code: string } | undefined {
  if (problem === undefined) return undefined;
  return {
    message: `The model's response has ${what} with ${problem}; ` +
      "penguin stopped reading it (a limit on what one response may hold)",
    code: TOO_LARGE_CODE,
  };
}
