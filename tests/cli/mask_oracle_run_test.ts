// Attack round 25 secrets repro04, end to end: a model that knows a secret's public prefix prints
// the prefix followed by every possible next character and reads which line came back masked.
// With a real `penguin run`, a vault value of the `sk-proj-` form, and the guesses made by the
// sandboxed command (the tool call holds only the prefix and the alphabet): every guess comes
// back as it was printed until 8 characters after the prefix are right at once.
import assert from "node:assert/strict";
import { type ScriptedTurn, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { setVault } from "../support/secrets.ts";
import { withModelRoot } from "../support/roots.ts";

const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const RANDOM = "Qm7vX2kP9wLr4TzA8cYe1NbF6hJs3GdU5oKi0RqWxVnE";
const SECRET = `sk-proj-${RANDOM}`;
const MARKER = "[redacted:vault:PROJ_KEY]";

/** A command printing `<known>` followed by each character of the alphabet, one a line. */
function guessCommand(known: string): string {
  const chars = B64URL.split("").map((c) => `'${c}'`).join(" ");
  return `for c in ${chars}; do printf 'guess:%s%s\\n' '${known}' "$c"; done`;
}

Deno.test("run: a model printing a secret's prefix and each next character learns nothing from the masking", async () => {
  const queue: ScriptedTurn[] = [
    turn.toolCall("exec_command", { cmd: guessCommand("sk-proj-") }),
    turn.toolCall("exec_command", { cmd: guessCommand(`sk-proj-${RANDOM.slice(0, 6)}`) }),
    turn.toolCall("exec_command", { cmd: guessCommand(`sk-proj-${RANDOM.slice(0, 7)}`) }),
    turn.text("done"),
  ];
  await withModelRoot({ handler: () => queue.shift(), maxRequests: 8 }, async (sb, server) => {
    await setVault(sb.root, "PROJ_KEY", SECRET);
    const r = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests.length, 4);
    // What each command printed, as the next request gave it to the model (its last output; the
    // history before it holds the earlier ones).
    const outputs = server.requests.slice(1).map((q) => {
      const body = JSON.stringify(q.body);
      return [...body.matchAll(/guess:([^\\]*)\\n/g)].map((m) => m[1]!).slice(-B64URL.length);
    });
    const known = ["sk-proj-", `sk-proj-${RANDOM.slice(0, 6)}`, `sk-proj-${RANDOM.slice(0, 7)}`];
    outputs.forEach((lines, i) => {
      const expected = B64URL.split("").map((c) => {
        const guess = known[i]! + c;
        // Eight right characters after the prefix at once: a piece of the secret, masked.
        return SECRET.startsWith(guess) && guess.length >= "sk-proj-".length + 8 ? MARKER : guess;
      });
      assert.deepEqual(lines, expected, `the output of command ${i + 1} as the model got it`);
    });
    // Only the one line with eight right characters was masked, in the last command's output.
    assert.equal(outputs.flat().filter((l) => l === MARKER).length, 1);
  });
});
