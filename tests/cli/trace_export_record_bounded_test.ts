// `trace export` of a record near the 64 MiB record bound (a trace imported from elsewhere may
// hold one): a long text is escaped, encoded and written a slice at a time, never joined to its
// markup or copied whole, and the decoded line is freed once parsed, so one 60 MB record costs an
// export about twice its size (attack round 24 bounded R12: an answer took md and html to 325 MB,
// json to 400 MB; a tool output took md and html to 520 MB, a user text md to 840 MB). Real
// `penguin` processes; peaks as /usr/bin/time would report them.
import assert from "node:assert/strict";
import { join } from "node:path";
import { withRoot } from "../support/roots.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { sessionMetaRecord } from "../support/trace_meta.ts";

const MB = 1000 * 1000;
/** What exporting one 60 MB record may cost at the peak: under the 300 MB line, with room. */
const PEAK_LIMIT = 260 * MB;
const ID = "session-2026-12-01-10-00-00-0b16c0de";
const TS = "2026-12-01T10:00:00.000Z";
/** 60 MB of short lines: the text of each large record. */
const TEXT = "line of text\n".repeat(Math.floor(60 * MB / 13));

/** A trace of session ID in `root`'s traces: its meta, then one request of `payloads` (model_msg). */
async function writeTrace(root: string, payloads: Record<string, unknown>[]): Promise<void> {
  const dir = join(root, "default_project", "agents", "default_agent", "traces", "2026-12-01");
  await Deno.mkdir(dir, { recursive: true });
  using f = await Deno.open(join(dir, `${ID}_001.jsonl`), { write: true, createNew: true });
  const enc = new TextEncoder();
  const record = (type: string, payload: unknown) =>
    f.write(enc.encode(JSON.stringify({ timestamp: TS, type, payload }) + "\n"));
  await f.write(enc.encode(JSON.stringify(sessionMetaRecord(ID)) + "\n"));
  await record("event_msg", { type: "request_begin" });
  for (const p of payloads) await record("model_msg", p);
  await record("event_msg", { type: "request_end", status: "completed" });
}

/** Export the session in `format` to a file: its size, its last bytes, and the peak. */
async function exportPeak(
  root: string,
  format: "md" | "html" | "json",
): Promise<{ size: number; tail: string; peakMB: number }> {
  const out = join(root, `export.${format}`);
  const r = await runCliPeak(
    ["--root", root, "trace", "export", ID, "--format", format, "-o", out],
    root,
  );
  assert.equal(r.code, 0, r.stderr);
  const bytes = await Deno.readFile(out);
  await Deno.remove(out);
  const tail = new TextDecoder().decode(bytes.subarray(bytes.length - 200));
  return { size: bytes.length, tail, peakMB: Math.round(r.peakBytes / MB) };
}

const ENDS = { md: /_request 1 completed[^\n]*_\n$/, html: /<\/html>\n$/, json: /\n\}\n$/ };

/** Export in `format`: the file is whole (more than `minSize` bytes, its end there), the peak under the limit. */
async function assertBoundedExport(
  root: string,
  format: "md" | "html" | "json",
  minSize: number,
): Promise<void> {
  const r = await exportPeak(root, format);
  assert.ok(r.size > minSize, `${format}: ${r.size} bytes, the texts are ${minSize}`);
  assert.match(r.tail, ENDS[format], `${format} is complete`);
  assert.ok(r.peakMB * MB <= PEAK_LIMIT, `${format}: peak ${r.peakMB} MB`);
}

Deno.test({
  name: "trace export of one 60 MB answer, as md, html and json: whole, peak ≤ 260 MB (R12)",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await withRoot(async (root) => {
      await writeTrace(root, [
        { type: "text", role: "assistant", text: TEXT, stop_reason: "completed" },
      ]);
      for (const format of ["md", "html", "json"] as const) {
        await assertBoundedExport(root, format, TEXT.length);
      }
    });
  },
});

Deno.test({
  name:
    "trace export of a 60 MB user text and a 60 MB tool output, as md and html: peak ≤ 260 MB (R12)",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await withRoot(async (root) => {
      await writeTrace(root, [
        { type: "text", role: "user", text: TEXT, stop_reason: "completed" },
        {
          type: "tool_call",
          role: "assistant",
          tool_call_id: "c1",
          name: "exec_command",
          arguments: '{"cmd":"cat log"}',
          stop_reason: "completed",
        },
        {
          type: "tool_call_output",
          role: "user",
          tool_call_id: "c1",
          output: TEXT,
          stop_reason: "completed",
        },
      ]);
      for (const format of ["md", "html"] as const) {
        await assertBoundedExport(root, format, 2 * TEXT.length);
      }
    });
  },
});

Deno.test({
  name:
    "trace export and show of 50 MB tool-call arguments: the preview reads 16 KiB, peak ≤ 260 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // The one-line preview built a field's value a character at a time and collapsed whitespace
    // over all the arguments, to show 120 characters: export 1.6 GB, show 915 MB.
    const long = "x ".repeat(25 * MB);
    await withRoot(async (root) => {
      const call = (id: string, name: string, args: string) => ({
        type: "tool_call",
        role: "assistant",
        tool_call_id: id,
        name,
        arguments: args,
        stop_reason: "completed",
      });
      await writeTrace(root, [
        call("c1", "exec_command", JSON.stringify({ description: "d", cmd: `echo ${long}` })),
        call("c2", "no_such_tool", JSON.stringify({ data: long })),
      ]);
      await assertBoundedExport(root, "md", 0);
      const show = await runCliPeak(["--root", root, "trace", "show", ID], root);
      assert.equal(show.code, 0, show.stderr);
      // Each call's line is its preview, cut and marked as cut.
      assert.match(show.stdout, /\$ echo x x x[ x]*…/);
      assert.ok(show.peakBytes <= PEAK_LIMIT, `show: peak ${Math.round(show.peakBytes / MB)} MB`);
    });
  },
});
