// Sixteen commands streaming 50 MB each at once, as one line (attack round 24, R6): four
// background subagents answer one response of four exec_command calls each, so the process runs
// MAX_PROCESS_COMMANDS commands together. Each output is cut to the tool's cap and archived with
// its head and tail, and penguin's peak stays bounded: measured 140–165 MB; before the fix
// 294–355 MB (a 4 MiB tail ring per archive, and the pieces of output each command streamed left
// a dead buffer or a string in the old generation behind them, tens of MB between collections).
import assert from "node:assert/strict";
import { detectSandbox } from "../../lib/sandbox/detect.ts";
import { ARCHIVE_LIMIT_BYTES } from "../../lib/tools/_archive.ts";
import { MAX_PROCESS_COMMANDS } from "../../lib/tools/command_gate.ts";
import { item, type RecordedRequest, startModelServer, turn } from "../support/model_server.ts";
import { inRoot } from "../support/cli.ts";
import { makeRoot } from "../support/roots.ts";
import { toolOutputsById, turnOf, whose } from "../agent/_subagent_support.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { runSubagent } from "./_subagent_calls.ts";

const MB = 1000 * 1000;
/** Penguin's peak with the sixteen commands streaming (well below the 300 MB of the project). */
const PEAK_LIMIT = 240 * MB;
/** Killed past this (a bound, not a timing). */
const KILL_AFTER_SECONDS = 240;
const SUBAGENTS = 4;
const COMMANDS = MAX_PROCESS_COMMANDS / SUBAGENTS;

const SANDBOX = Deno.build.os === "linux" && (await detectSandbox()).kind === "bwrap";

/** 50 MB of `q` as one line, then the call's id: the end of the output says whose it is. */
const printing = (id: string) => `head -c 50000000 /dev/zero | tr '\\0' q; echo "end-${id}"`;

/** The parent starts the subagents in the background; each runs its commands at once. */
function handler(req: RecordedRequest) {
  const who = whose(req);
  if (who === "parent") {
    if (turnOf(req) > 0) return turn.text("started");
    return turn.of(...Array.from(
      { length: SUBAGENTS },
      (_, s) => runSubagent(`p${s}`, `stream ${s}`, `[[s${s}]] Print it all.`, true),
    ));
  }
  if (turnOf(req) > 0) return turn.text(`${who} done`);
  return turn.of(...Array.from({ length: COMMANDS }, (_, k) => {
    const id = `${who}c${k}`;
    // The longest window: the commands finish in it, their output is the calls' own.
    const args = { description: "print", cmd: printing(id), yield_time_ms: 3_600_000 };
    return item.toolCall("exec_command", args, { id });
  }));
}

/** The last `n` bytes of the file at `path`, as text. */
async function lastBytes(path: string, n: number): Promise<string> {
  using f = await Deno.open(path);
  const size = (await f.stat()).size;
  await f.seek(Math.max(0, size - n), Deno.SeekMode.Start);
  const buf = new Uint8Array(n);
  const got = await f.read(buf);
  return new TextDecoder().decode(buf.subarray(0, got ?? 0));
}

Deno.test({
  name:
    `${MAX_PROCESS_COMMANDS} commands streaming 50 MB of one line at once: archived, peak ≤ 240 MB`,
  ignore: !SANDBOX || !CAN_MEASURE_PEAK,
  async fn() {
    const server = await startModelServer({ handler, maxRequests: 100 });
    const sb = await makeRoot(server, { visible: true });
    try {
      const r = await runCliPeak(
        inRoot(sb, "run", "-m", "[[parent]] Start the printers."),
        sb.base,
        KILL_AFTER_SECONDS,
      );
      assert.equal(r.code, 0, r.stderr);
      const peak = Math.round(r.peakBytes / MB);
      assert.ok(r.peakBytes <= PEAK_LIMIT, `penguin's peak: ${peak} MB`);
      const outputs = toolOutputsById(server.requests);
      for (let s = 0; s < SUBAGENTS; s++) {
        for (let k = 0; k < COMMANDS; k++) {
          const id = `s${s}c${k}`;
          const output = outputs.get(id) ?? "";
          assert.match(
            output,
            /\n\[output truncated: exceeded 16000 chars\]\n/,
            `${id}: ${output.slice(-300)}`,
          );
          // Head and tail kept; or all of it, when so much of what it printed was dropped unread
          // (`_output_buffer.ts`) that less than the limit was left, as on a machine busy elsewhere.
          const path = /\[output archived(?: \(8 MiB limit; head and tail kept\))?: ([^\]]+)\]/
            .exec(output)?.[1];
          assert.ok(path !== undefined, `${id}: ${output.slice(-300)}`);
          assert.ok((await Deno.stat(path)).size <= ARCHIVE_LIMIT_BYTES, id);
          // The archive ends as the output did.
          const end = await lastBytes(path, 64);
          assert.ok(end.endsWith(`qqqqend-${id}\n`), `${id}: ${JSON.stringify(end)}`);
        }
      }
    } finally {
      await server.close();
      await Deno.remove(sb.base, { recursive: true });
    }
  },
});
