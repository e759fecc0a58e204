// The worker pool holds at most `maxWorkers` workers however many calls come at once: a response of
// hundreds of file-tool calls once started an isolate (some 10 MB) for each, all at the same time.
// Further calls wait for a worker to come free, and a call aborted while it waits ends unrun.
import assert from "node:assert/strict";
import type { ToolDefinition } from "../../lib/tools/tool.ts";
import { createToolWorkerPool } from "../../lib/tools/worker/mod.ts";
import { withDirs } from "./_support.ts";

const BUGGY = new URL("./_buggy_worker.ts", import.meta.url);

const WAIT: ToolDefinition = {
  name: "wait_abort",
  description: "waits for its abort",
  parameters: { type: "object", properties: {} },
  permission: "rw",
  timeoutMs: 0,
  maxOutputLength: 0,
  callDescription: false,
};

Deno.test("calls beyond maxWorkers wait for a free worker; the pool never holds more", async () => {
  const pool = createToolWorkerPool(BUGGY, { maxWorkers: 2, abortGraceMs: 5000 });
  try {
    await withDirs(async (d) => {
      const CALLS = 6;
      const ctls = Array.from({ length: CALLS }, () => new AbortController());
      /** Indexes of calls that reported "waiting" (they hold a worker), in order. */
      const started: number[] = [];
      const sizes: number[] = [];
      let notify: (() => void) | undefined;
      const ends = ctls.map(async (ctl, i) => {
        const ctx = {
          workspace: d.ws,
          scratchpad: d.scratch,
          sessionId: "session-test",
          toolCallId: `call_${i}`,
          signal: ctl.signal,
        };
        try {
          for await (const e of pool.run(WAIT, {}, ctx)) {
            if (e.type === "delta" && e.text === "waiting") {
              started.push(i);
              sizes.push(pool.size);
              notify?.();
            }
          }
          return "ran";
        } catch (err) {
          return (err as Error).name;
        }
      });
      const startedCount = async (n: number) => {
        while (started.length < n) await new Promise<void>((r) => (notify = r));
      };
      // Two run; each abort frees a worker for the next waiting call.
      await startedCount(2);
      for (let n = 3; n <= CALLS - 1; n++) {
        ctls[started[n - 3]!]!.abort();
        await startedCount(n);
      }
      // The last call has not started: aborted while it waits, it ends without running.
      const last = [...Array(CALLS).keys()].find((i) => !started.includes(i))!;
      ctls[last]!.abort();
      for (const i of started) ctls[i]!.abort();
      const results = await Promise.all(ends);
      assert.equal(started.length, CALLS - 1);
      assert.ok(sizes.every((s) => s <= 2), `workers alive when a call started: ${sizes}`);
      assert.equal(results[last], "AbortError");
      assert.deepEqual(results.filter((r) => r === "ran").length, CALLS - 1);
    });
  } finally {
    pool.dispose();
  }
});
