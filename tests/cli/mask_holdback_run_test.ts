// Attack round 26 B-holdback-oracle, end to end: a command prints a secret's public prefix and a
// few guessed characters with no newline, then keeps running. The masker of its output held back
// a tail that could still become the secret, so at the end of the yield window the model saw its
// guess when it was wrong and not when it was right: one character of a provider key a turn. Now
// the held tail is decided at each window's end as if the output ended there: right and wrong
// guesses come back alike.
import assert from "node:assert/strict";
import { turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { setVault } from "../support/secrets.ts";
import { withModelRoot } from "../support/roots.ts";

const RANDOM = "Qm7vX2kP9wLr4TzA8cYe1NbF6hJs3GdU5oKi0RqWxVnE";
const SECRET = `sk-proj-${RANDOM}`;
const RIGHT = `sk-proj-${RANDOM.slice(0, 5)}`;
const WRONG = `sk-proj-${RANDOM.slice(0, 4)}#`;

/** The last message of a request: the tool output the model got last. */
function lastOutput(body: unknown): string {
  const messages = (body as { messages: { content?: unknown }[] }).messages;
  return JSON.stringify(messages.at(-1)?.content ?? "");
}

Deno.test("run: a guess left unfinished at a yield comes back the same whether or not it starts a secret", async () => {
  const guesses = [RIGHT, WRONG];
  let current = 0;
  let polls = 0;
  const seen: string[] = [];
  const handler = (rec: { body: unknown }, index: number) => {
    if (index > 0) {
      const out = lastOutput(rec.body);
      const id = /process_id (\S+?)[;\]]/.exec(out)?.[1];
      // The command may not have printed yet when its first window ended: poll it (bounded).
      if (!out.includes("guess:") && id !== undefined && polls++ < 40) {
        return turn.toolCall("input_command", { process_id: id, chars: "", yield_time_ms: 300 });
      }
      seen.push(out);
      current++;
      polls = 0;
    }
    if (current >= guesses.length) return turn.text("done");
    return turn.toolCall("exec_command", {
      cmd: `printf 'guess:%s' '${guesses[current]}'; exec sleep 600`,
      yield_time_ms: 300,
    });
  };
  await withModelRoot({ handler, maxRequests: 90 }, async (sb) => {
    await setVault(sb.root, "PROJ_KEY", SECRET);
    const r = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(seen.length, 2);
    assert.match(seen[0]!, new RegExp(`guess:${RIGHT}\\b`), "the right guess, shown as printed");
    assert.match(seen[1]!, new RegExp(`guess:${WRONG.replace("#", "\\#")}`), "the wrong one too");
  });
});
