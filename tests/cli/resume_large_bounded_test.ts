// `penguin run --resume` of a session whose trace is 80 MB (40 assistant
// texts of 2 MiB, one after the other or each answering a prompt): the
// replay, the rebuilt history and the request body sent for it never all
// exist at once (the body is streamed in small chunks, long texts in slices),
// so penguin's peak stays under 4× the trace's size; and the request the model
// receives still carries the whole history, up to the last record's text.
import assert from "node:assert/strict";
import { join } from "node:path";
import { BIG_SESSION, LAST_MARK, writeBigTrace } from "../support/big_trace.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { turn, withModelServer } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";
import { tracesDir } from "../agent/_support.ts";

const MB = 1000 * 1000;
/**
 * The most penguin may hold at its peak, per byte of the trace: the history
 * itself, the runtime (~100 MB) and what parsing the trace leaves for the GC
 * (measured 2.8–3.3× on an idle machine, 3.5× under a loaded parallel suite; 5–10× when the request body was one string, the chat
 * conversion was kept whole, or the trace was parsed again to number calls).
 */
const PEAK_PER_BYTE = 4;

Deno.test({
  name: "run --resume of an 80 MB trace sends the whole history with a peak ≤ 4× the trace",
  ignore: !CAN_MEASURE_PEAK,
  async fn(t) {
    for (const prompts of [false, true]) {
      await t.step(
        prompts ? "texts answering prompts" : "texts in a row",
        () => resumeBig(prompts),
      );
    }
  },
});

async function resumeBig(prompts: boolean): Promise<void> {
  await withModelServer({ turns: [turn.text("resumed-answer")] }, async (server) => {
    const sb = await makeRoot(server, { contextWindow: 100_000_000 });
    try {
      const dir = join(tracesDir(sb.root), "2026-12-01");
      await Deno.mkdir(dir, { recursive: true });
      const { bytes } = await writeBigTrace(dir, 40, 2 * 1024 * 1024, {
        provider: "custom",
        model_id: "m",
        model_context_window: 100_000_000,
        workspace: sb.workspace,
      }, prompts);
      assert.ok(bytes > 80 * MB, `trace of ${bytes} bytes`);

      const r = await runCliPeak(
        ["--root", sb.root, "run", "--resume", BIG_SESSION, "-m", "hi"],
        sb.workspace,
      );
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.stdout.includes("resumed-answer"), r.stdout);
      assert.equal(server.requests.length, 1);
      const sent = JSON.stringify(server.requests[0]!.body);
      assert.ok(sent.includes(LAST_MARK), "the request holds the last record's text");
      assert.ok(sent.length > 80 * MB, `the request holds the whole history (${sent.length})`);
      assert.ok(
        r.peakBytes <= PEAK_PER_BYTE * bytes,
        `peak ${Math.round(r.peakBytes / MB)} MB for a ${Math.round(bytes / MB)} MB trace`,
      );
    } finally {
      await sb.cleanup();
    }
  });
}
