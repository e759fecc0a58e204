// `penguin run` whose command prints 256 KB of `\u00` (an escape that never completes) with a
// vault value set: penguin's peak stays within a margin of the same run printing 256 KB of plain
// text (red team final13 F13-3: 32 KB of `\u00` took penguin to 521 MB, 128 KB past 900 MB), and
// the value, printed in escapes after the run, is masked in what the model is sent.
import assert from "node:assert/strict";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { inRoot } from "../support/cli.ts";
import { makeRoot } from "../support/roots.ts";
import { toolOutputsById } from "../agent/_subagent_support.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { assertNoPieceOf, setVault } from "../support/secrets.ts";

const MB = 1000 * 1000;
/**
 * What masking 256 KB of `\u00` may add to the peak over 256 KB of plain text (measured: within
 * 1 MB of it; before the fix, over 800 MB more).
 */
const MARGIN = 24 * MB;
const VALUE = "Qz7Kp2Xw9Lm4Rt6Yh8Nb3Vc5Jd1Fg0Ss";
/** Killed past this (a bound, not a timing): before the fix the run grew past 900 MB in 20 s. */
const KILL_AFTER_SECONDS = 90;

/**
 * A command printing the value spelled `\xHH`, `pattern` 65,536 times (256 KB for four
 * characters), and the value again.
 */
function printing(pattern: string): string {
  const spelled = [...VALUE].map((c) => `\\x${c.charCodeAt(0).toString(16)}`).join("");
  return `printf 'v=%s\\n' '${spelled}'; yes '${pattern}' | head -n 65536 | tr -d '\\n'; ` +
    `printf '\\nw=%s\\n' '${spelled}'`;
}

/** What one run printing `pattern` showed: penguin's peak, the model's view and the archive. */
interface Run {
  peak: number;
  /** The output the model was sent (its head: the output is longer than a tool result). */
  output: string;
  /** The whole output as archived in the data root. */
  archived: string;
}

async function runPrinting(pattern: string): Promise<Run> {
  const server = await startModelServer({
    handler: (_req, index) =>
      index === 0
        ? turn.of(item.toolCall("exec_command", { cmd: printing(pattern) }, { id: "c0" }))
        : turn.text("done"),
  });
  const sb = await makeRoot(server);
  try {
    await setVault(sb.root, "DB_PW", VALUE);
    const r = await runCliPeak(
      inRoot(sb, "run", "-m", "Print it."),
      sb.base,
      KILL_AFTER_SECONDS,
    );
    assert.equal(r.code, 0, r.stderr);
    const output = toolOutputsById(server.requests).get("c0") ?? "";
    const path = /\[output archived: ([^\]]+)\]/.exec(output)?.[1];
    assert.ok(path !== undefined, output.slice(-300));
    return { peak: r.peakBytes, output, archived: await Deno.readTextFile(path) };
  } finally {
    await server.close();
    await Deno.remove(sb.base, { recursive: true });
  }
}

Deno.test({
  name: "penguin run: 256 KB of \\u00 output is masked within a memory margin of plain output",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const plain = await runPrinting("abcd");
    const escapes = await runPrinting("\\u00");
    assert.ok(escapes.archived.includes("\\u00".repeat(65536)), escapes.output.slice(0, 200));
    for (const run of [plain, escapes]) {
      assert.ok(run.output.startsWith("v=[redacted:vault:DB_PW]\n"), run.output.slice(0, 200));
      assert.ok(run.archived.endsWith("\nw=[redacted:vault:DB_PW]\n"), run.archived.slice(-200));
      assertNoPieceOf(run.output, [VALUE], "the output the model was sent");
      assertNoPieceOf(run.archived, [VALUE], "the archived output");
    }
    const shown = `\\u00: ${Math.round(escapes.peak / MB)} MB, plain: ${
      Math.round(plain.peak / MB)
    } MB`;
    assert.ok(escapes.peak <= plain.peak + MARGIN, shown);
  },
});
