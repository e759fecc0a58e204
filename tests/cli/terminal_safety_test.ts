// Escape sequences written by the model or printed by a tool never reach the
// user's terminal raw in `penguin run` and `penguin chat`: window titles,
// OSC 52 clipboard writes, screen clears, C1 controls and `\r` overwrites are
// removed or shown, exactly as `penguin trace show` shows the same records.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { assertGoodTrace, ofKind } from "../agent/_support.ts";
import { withModelRoot } from "../support/roots.ts";

/** What a hostile model writes: title, clipboard, clear screen, C1 CSI, a carriage-return overwrite. */
const HOSTILE = "A\x1b]0;pwned-title\x07B\x1b]52;c;cm0gLXJmIH4K\x07C\x1b[2JD\x9b2JE ok\rEVIL\n";
/** The same bytes printed by a command (`printf` octal escapes; `\302\233` is U+009B in UTF-8). */
const PRINTF = String
  .raw`printf 'P\033]0;pwned-title\007Q\033]52;c;cm0gLXJmIH4K\007R\033[2JS\302\2332JT ok\rEVIL\n'`;

/** Whether `text` holds anything a terminal would act on (NO_COLOR is set: penguin adds no SGR). */
function assertInert(text: string, what: string): void {
  assert.ok(!text.includes("\x1b"), `${what}: no ESC at all\n${JSON.stringify(text)}`);
  assert.ok(!/[\x80-\x9f]/.test(text), `${what}: no C1 controls\n${JSON.stringify(text)}`);
  assert.ok(!text.includes("\r"), `${what}: no carriage return\n${JSON.stringify(text)}`);
  // deno-lint-ignore no-control-regex
  assert.ok(!/[\x00-\x08\x0b-\x1f\x7f]/.test(text.replace(/\t/g, "")), `${what}: no C0 controls`);
}

Deno.test("run and chat keep hostile escape sequences from the model and from tools off the terminal", async () => {
  const turns = () => [
    turn.of(
      item.thinking(HOSTILE),
      item.text(HOSTILE),
      item.toolCall("exec_command", { cmd: PRINTF, description: `list ${HOSTILE}` }),
    ),
    turn.text(`done ${HOSTILE}`, { chunk: 3 }), // escape sequences cut across stream fragments
  ];
  for (const command of ["run", "chat"] as const) {
    await withModelRoot({ turns: turns() }, async (sb) => {
      const r = command === "run"
        ? await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "Go."])
        : await runCli(["--root", sb.root, "chat", "--workspace", sb.workspace], {
          stdin: "Go.\n",
        });
      assert.equal(r.code, 0, r.stderr);
      assertInert(r.stdout, `${command} stdout`);
      assertInert(r.stderr, `${command} stderr`);
      // The text itself still shows, with the overwrite turned into a line break.
      assert.match(r.stdout, /^ABCDE ok\nEVIL$/m, "model text");
      assert.match(r.stdout, /^done ABCDE ok\nEVIL$/m, "text streamed in small fragments");
      assert.match(r.stdout, /^ {2}│ PQRST ok\n {2}│ EVIL$/m, "command output");
      // The call shows its arguments' control characters instead of acting on them.
      assert.match(r.stdout, /exec_command <- list A\\x1b\]0;pwned-title\\x07B/);
      const sid = /--resume (session-\S+)/.exec(r.stderr + r.stdout)?.[1];
      assert.ok(sid, r.stderr);
      const records = await assertGoodTrace(sb.root, sid);
      assert.ok(
        String(ofKind(records, "tool_call_output")[0]!.output).includes("\x1b]52;c;"),
        "the trace keeps the output byte for byte",
      );

      const shown = await runCli(["--root", sb.root, "trace", "show", sid, "--verbose"]);
      assert.equal(shown.code, 0, shown.stderr);
      assertInert(shown.stdout, "trace show");
    });
  }
});

Deno.test("run keeps escape sequences in a provider's error message off the terminal", async () => {
  await withModelRoot({
    turns: [{
      items: [],
      http_error: { status: 401, message: "bad key \x1b]0;pwned\x07\x1b[2J\x9b2J gone" },
    }],
  }, async (sb) => {
    const r = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "Go."]);
    assert.equal(r.code, 1, r.stderr);
    assertInert(r.stdout, "stdout");
    assertInert(r.stderr, "stderr");
    assert.match(r.stdout, /\[abort\]: llm request error: .*bad key/);
  });
});

Deno.test("an error printed by the CLI is terminal-safe", async () => {
  const dir = await Deno.makeTempDir({ prefix: "penguin-term-" });
  try {
    // The message quotes a path the user (or a script fed by the model) passed.
    const target = join(dir, "x\x1b]0;pwned\x07\x1b[2J.jsonl");
    const r = await runCli(["--root", join(dir, "data"), "run", "--resume", target, "-m", "x"]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /^penguin: Trace file does not exist: .*x\\x1b\]0;pwned\\x07\\x1b\[2J\.jsonl$/m,
    );
    assertInert(r.stderr, "stderr");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
