/**
 * A large valid trace for memory tests, written quickly: the records of
 * samples/plain's trace, then `requests` more requests each answered with
 * one assistant text record of `textBytes` characters, the last one ending
 * in {@linkcode LAST_MARK}. The file is named like a trace of the data
 * root's layout, so `--resume` finds it when `dir` is a traces directory.
 *
 * @module
 */
import { join } from "node:path";
import { REPO } from "./cli.ts";

/** The text the last assistant record ends with. */
export const LAST_MARK = "LAST-RECORD-MARK-7f3c";

const SAMPLE = join(REPO, "samples", "plain", "session-2026-12-01-23-07-39-9b411515_001.jsonl");

/** The session id of the written trace. */
export const BIG_SESSION = "session-2026-12-01-23-07-39-9b411515";

/**
 * Write the trace into `dir`; returns its path and size in bytes. `meta`
 * replaces fields of the session_meta payload (a provider, a workspace);
 * with `prompts`, a short user text comes before each request, as in a
 * session whose every turn answers a prompt.
 */
export async function writeBigTrace(
  dir: string,
  requests: number,
  textBytes: number,
  meta: Record<string, unknown> = {},
  prompts = false,
): Promise<{ path: string; bytes: number }> {
  const path = join(dir, `${BIG_SESSION}_001.jsonl`);
  const [head, ...rest] = (await Deno.readTextFile(SAMPLE)).split("\n");
  const first = JSON.parse(head!);
  first.payload = { ...first.payload, ...meta };
  const sample = [JSON.stringify(first), ...rest].join("\n");
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  const enc = new TextEncoder();
  let bytes = 0;
  const put = async (s: string) => {
    const b = enc.encode(s);
    bytes += b.length;
    let off = 0;
    while (off < b.length) off += await file.write(b.subarray(off));
  };
  try {
    await put(sample.endsWith("\n") ? sample : sample + "\n");
    const body = "lorem ipsum ".repeat(Math.ceil(textBytes / 12)).slice(0, textBytes);
    const ts = "2026-12-01T23:08:00.000Z";
    const event = (payload: unknown) =>
      JSON.stringify({ timestamp: ts, type: "event_msg", payload }) + "\n";
    for (let i = 0; i < requests; i++) {
      const text = i === requests - 1 ? body.slice(LAST_MARK.length) + LAST_MARK : body;
      const prompt = prompts
        ? JSON.stringify({
          timestamp: ts,
          type: "model_msg",
          payload: { type: "text", role: "user", text: `go on ${i}`, stop_reason: "completed" },
        }) + "\n"
        : "";
      await put(
        prompt + event({ type: "request_begin" }) +
          JSON.stringify({
            timestamp: ts,
            type: "model_msg",
            payload: { type: "text", role: "assistant", text, stop_reason: "completed" },
          }) + "\n" +
          event({ type: "request_end", status: "completed" }),
      );
    }
  } finally {
    file.close();
  }
  return { path, bytes };
}
