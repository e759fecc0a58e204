import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnCli } from "../support/cli.ts";
import { sid, tracesDay, withTempDir } from "../inspect/_support.ts";

const WRITER = new URL("../inspect/_follow_writer.ts", import.meta.url).pathname;

/** Reads a child's stdout incrementally. */
function lineReader(stream: ReadableStream<Uint8Array>) {
  const reader = stream.getReader();
  const dec = new TextDecoder();
  let text = "";
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  return {
    get text() {
      return text;
    },
    /** Read until `done(text)` holds; fails after `limitMs` (a bound, not a timing claim). */
    async until(done: (t: string) => boolean, limitMs = 180_000): Promise<string> {
      const deadline = Date.now() + limitMs;
      while (!done(text)) {
        if (Date.now() > deadline) throw new Error(`gave up waiting; got:\n${text}`);
        let timer: ReturnType<typeof setTimeout> | undefined;
        const timeout = new Promise<null>((r) => (timer = setTimeout(() => r(null), 1000)));
        // A read that lost the race stays pending and is awaited next time (its chunk is not lost).
        pending ??= reader.read();
        const chunk = await Promise.race([pending, timeout]);
        clearTimeout(timer);
        if (chunk === null) continue;
        pending = undefined;
        if (chunk.done) throw new Error(`stream ended; got:\n${text}`);
        text += dec.decode(chunk.value, { stream: true });
      }
      return text;
    },
    cancel: () => reader.cancel(),
  };
}

Deno.test("penguin trace follow prints records as another process writes them, across a rotation, and exits 0 on SIGINT", async () => {
  await withTempDir(async (root) => {
    const id = sid("f0110e01");
    const day = await tracesDay(root);
    const tracesDir = join(day, "..");
    const writer = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", WRITER, tracesDir, id],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const w = lineReader(writer.stdout);
    await w.until((t) => t.includes("ready\n"));

    const follow = spawnCli(["trace", "follow", "--root", root, "--interval", "50", id]);
    const f = lineReader(follow.stdout);
    try {
      await f.until((t) => t.includes("MARK-ONE-END\n"));
      const gw = writer.stdin.getWriter();
      await gw.write(new TextEncoder().encode("go\n"));
      await gw.close();
      await w.until((t) => t.includes("done\n"));
      const out = await f.until((t) => /── request 3 completed/.test(t));
      follow.kill("SIGINT");
      const status = await follow.status;
      assert.equal(status.code, 0);
      const err = new TextDecoder().decode(
        await new Response(follow.stderr).arrayBuffer(),
      ).replace(/^.*Permissions in the config file.*\n/gm, "");
      assert.match(err, /^following session-.*_001\.jsonl \(Ctrl-C to stop\)\n$/);
      // Everything of both files, in order, each record once.
      const order = [
        "> MARK-ONE-START",
        "MARK-ONE-END",
        "[compaction] summarizing context (turns)…",
        "[compaction] done; continuing with the summarized context",
        `── new context (after compaction) · ${join(day, `${id}_002.jsonl`)} ──`,
        "> [context_summary]",
        "MARK-TWO-END",
      ];
      let at = -1;
      for (const s of order) {
        const i = out.indexOf(s);
        assert.ok(i > at, `${s} out of order in:\n${out}`);
        at = i;
      }
      assert.equal(out.split("MARK-TWO-END").length, 2);
      assert.equal(out.match(/^── request \d+ completed/gm)?.length, 3);
    } finally {
      try {
        follow.kill("SIGKILL");
      } catch { /* already exited */ }
      await follow.status;
      await f.cancel().catch(() => {});
      await w.cancel().catch(() => {});
      await writer.status;
    }
  });
});
