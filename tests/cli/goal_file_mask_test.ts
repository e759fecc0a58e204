// What penguin prints about a goal file the model wrote is masked with the current secrets (attack
// pass final8 P36): the model puts a vault value in GOAL.yaml's `status` (or breaks the YAML on a
// line holding it); when the user continues the goal, the usage error quoting the file's problem
// holds no piece of the value, raw or JSON-escaped (final9 F6: a value with `"` and `\`).
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, turn } from "../support/model_server.ts";
import { inRoot, runCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { assertNoPieceOf, setVault } from "../support/secrets.ts";

const SECRET = "gls-4f1c9a2e7b3d8065";
/** A password with quotes and backslashes: every 8-character run of its JSON text holds an escape. */
const QUOTED = 'q7Lm"Zx9\\Kp3"Wt8\\Rv5"Hn2\\Yc4"';

/** The goal file path the [goal] block of a request names. */
function goalPathOf(body: unknown): string | undefined {
  const text = JSON.stringify(body);
  return /Goal file: ([^\s"\\]+GOAL\.yaml)/.exec(text)?.[1];
}

/** Run a goal whose model writes `content(V)` into its goal file, then continue it. */
async function continueAfterWrite(
  content: (v: string) => string,
  secret = SECRET,
  written = secret,
  quoted = true,
): Promise<void> {
  await withModelRoot({
    handler: (req) => {
      const path = goalPathOf(req.body);
      const sent = JSON.stringify(req.body);
      // The first request of the round writes the file; the next (its tool output back) ends it.
      if (sent.includes('"write_file"') && sent.includes("call-goal")) return turn.text("done");
      return turn.of(item.toolCall("write_file", {
        file_path: path ?? "GOAL.yaml",
        content: content(written),
      }, { id: "call-goal" }));
    },
    maxRequests: 10,
  }, async (sb) => {
    await setVault(sb.root, "GOAL_V", secret);
    const first = await runCli(inRoot(sb, "run", "--goal", "--max-rounds", "1", "-m", "Job"));
    const sid = /Session: (session-\S+)/.exec(first.stderr + first.stdout)?.[1];
    assert.ok(sid, `a session id:\n${first.stderr}`);
    const scratch = join(sb.root, "default_project", "agents", "default_agent", "scratchpad", sid);
    const file = await Deno.readTextFile(join(scratch, "GOAL.yaml"));
    assert.ok(file.includes(written), `the model wrote the value: ${file}`);
    const forms = [secret, JSON.stringify(secret).slice(1, -1)];
    assertNoPieceOf(first.stdout + first.stderr, forms, "the goal run's output", 8);

    const again = await runCli(inRoot(sb, "run", "--resume", sid, "--goal"));
    assert.equal(again.code, 2, again.stderr);
    assert.match(again.stderr, /has no goal to continue/);
    // A status is quoted (masked); a YAML error names the line, without the file's text.
    if (quoted) assert.match(again.stderr, /\[redacted:vault:GOAL_V\]/);
    else assert.match(again.stderr, /at line \d+/);
    assertNoPieceOf(again.stdout + again.stderr, forms, "the continue's output", 8);
  }, { visible: true });
}

Deno.test("run --resume --goal: a status holding a vault value is masked in the usage error", async () => {
  await continueAfterWrite((v) => `objective: "obj"\nstatus: "${v}"\n`);
});

Deno.test("run --resume --goal: a YAML error on a line holding a vault value is masked", async () => {
  await continueAfterWrite((v) => `objective: "obj"\nstatus: [${v}\n`, SECRET, SECRET, false);
});

Deno.test("run --resume --goal: a status holding a piece of a value with quotes and backslashes is masked (F6)", async () => {
  await continueAfterWrite(
    (v) => `objective: "obj"\nstatus: '${v}'\n`,
    QUOTED,
    QUOTED.slice(1, 21),
  );
});
