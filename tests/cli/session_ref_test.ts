// Every command that takes a session resolves it the same way (issue 13):
// its id, a unique part of it, `latest`, or the path of one of its trace
// files; a part matching several sessions is a usage error listing them.
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { listSessionFiles } from "../../lib/trace/paths.ts";
import { penguinArgv, REPO, runCli } from "../support/cli.ts";
import { turn } from "../support/model_server.ts";
import { tracesDir } from "../agent/_support.ts";
import { sid, traceBuilder, tracesDay } from "../inspect/_support.ts";
import { readUntil } from "../support/child_lines.ts";
import { withModelRoot } from "../support/roots.ts";

const A = sid("abcd1234");
const B = sid("abcd9999");

/** Two recorded sessions whose ids share the part "abcd" (dated before anything run today). */
async function writeTwins(root: string): Promise<void> {
  for (const id of [A, B]) {
    const b = traceBuilder(id).meta().tools().user(`hello ${id}`).begin().text("hi").end();
    await Deno.writeTextFile(join(await tracesDay(root), `${id}_001.jsonl`), b.jsonl());
  }
}

/** `penguin trace follow <target>`: the file it says it follows, then Ctrl-C. */
async function followed(root: string, target: string): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...penguinArgv(), "--root", root, "trace", "follow", "--new", target],
    cwd: REPO,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  const text = await readUntil(reader);
  if (text.startsWith("following ")) child.kill("SIGINT");
  while (!(await reader.read()).done) { /* drain */ }
  await child.status;
  return text.split("\n")[0]!;
}

Deno.test("every command that takes a session accepts its id, a unique part of it, latest and a trace path", async () => {
  await withModelRoot({
    turns: [turn.text("First."), ...Array.from({ length: 8 }, (_, i) => turn.text(`R${i}.`))],
  }, async (sb) => {
    const cli = (args: string[], stdin?: string) =>
      runCli(["--root", sb.root, ...args], {
        cwd: sb.workspace,
        ...(stdin !== undefined ? { stdin } : {}),
      });
    const first = await cli(["run", "-m", "First task."]);
    assert.equal(first.code, 0, first.stderr);
    const id = /^Session: (session-\S+)$/m.exec(first.stderr)![1]!;
    await writeTwins(sb.root);
    const path = (await listSessionFiles(tracesDir(sb.root), id))[0]!.path;
    const hex = id.slice(id.lastIndexOf("-") + 1);
    const targets = { id, prefix: id.slice(0, -2), hex, latest: "latest", path };

    // Every way of naming it, for the commands that read a session, and --resume.
    for (const [how, t] of Object.entries(targets)) {
      const show = await cli(["sessions", "show", t]);
      assert.equal(show.code, 0, `sessions show ${how}: ${show.stderr}`);
      assert.ok(show.stdout.startsWith(`Session ${id}\n`), `sessions show ${how}`);

      const trace = await cli(["trace", "show", t]);
      assert.equal(trace.code, 0, `trace show ${how}: ${trace.stderr}`);
      assert.ok(trace.stdout.startsWith(`session ${id} · `), `trace show ${how}`);

      const resumed = await cli(["run", "--resume", t, "-m", `Again by ${how}.`]);
      assert.equal(resumed.code, 0, `run --resume ${how}: ${resumed.stderr}`);
      assert.match(resumed.stderr, new RegExp(`^\\[resumed\\] ${id} · `, "m"), how);
    }
    // The newly resolvable ways (part of the id, latest) for every other command.
    for (const [how, t] of Object.entries({ prefix: targets.prefix, latest: "latest" })) {
      const stats = await cli(["trace", "stats", t]);
      assert.equal(stats.code, 0, `trace stats ${how}: ${stats.stderr}`);
      assert.match(stats.stdout, new RegExp(`^${id} `, "m"), `trace stats ${how}`);

      const exported = await cli(["trace", "export", "--format", "md", t]);
      assert.equal(exported.code, 0, `trace export ${how}: ${exported.stderr}`);
      assert.ok(exported.stdout.includes(id), `trace export ${how}`);

      const diff = await cli(["trace", "diff", t, A]);
      assert.equal(diff.code, 1, `trace diff ${how} (they differ): ${diff.stderr}`);
      assert.ok(diff.stdout.startsWith(`a: ${id} · `), `trace diff ${how}`);

      const tree = await cli(["sessions", "tree", t]);
      assert.equal(tree.code, 0, `sessions tree ${how}: ${tree.stderr}`);
      assert.ok(tree.stdout.startsWith(id), `sessions tree ${how}: ${tree.stdout}`);
      assert.doesNotMatch(tree.stdout, /abcd1234/);

      assert.equal(await followed(sb.root, t), `following ${basename(path)} (Ctrl-C to stop)`);
    }

    const chat = await cli(["chat", "--resume", targets.hex], "Once more.\n");
    assert.equal(chat.code, 0, chat.stderr);
    assert.ok(chat.stdout.includes("R5."), chat.stdout);
    assert.match(chat.stderr + chat.stdout, new RegExp(`penguin chat --resume ${id}`));

    const fork = await cli(["sessions", "fork", targets.prefix, "--before", "2"]);
    assert.equal(fork.code, 0, fork.stderr);
    assert.match(fork.stdout, new RegExp(`^Forked ${id} before user message 2 into `));
    const clone = await cli(["sessions", "clone", targets.hex]);
    assert.equal(clone.code, 0, clone.stderr);
    assert.match(clone.stdout, new RegExp(`^Cloned ${id} into (session-\\S+)`));
    const cloneId = /into (session-\S+)/.exec(clone.stdout)![1]!;
    const del = await cli(["sessions", "delete", "--yes", cloneId.slice(-8)]);
    assert.equal(del.code, 0, del.stderr);
    assert.match(del.stdout, new RegExp(`^Deleted session ${cloneId} `));
  });
});

Deno.test("a part of an id that matches several sessions is a usage error listing them, for every command", async () => {
  const dir = await Deno.makeTempDir({ prefix: "penguin-ref-" });
  try {
    await writeTwins(dir);
    const commands = [
      ["sessions", "show"],
      ["sessions", "fork", "--before", "1"],
      ["sessions", "clone"],
      ["sessions", "delete", "--yes"],
      ["sessions", "tree"],
      ["sessions", "compact"],
      ["trace", "show"],
      ["trace", "stats"],
      ["trace", "export"],
      ["trace", "follow"],
      ["trace", "diff", A],
      ["run", "-m", "x", "--resume"],
      ["chat", "--resume"],
    ];
    for (const c of commands) {
      const words = c.filter((w) => !w.startsWith("-") && w !== "x" && w !== "1" && w !== A);
      const r = await runCli(["--root", dir, ...c, "abcd"], { stdin: "" });
      assert.equal(r.code, 2, `${c.join(" ")}: ${r.stderr}`);
      const [first, second] = r.stderr.split("\n");
      assert.match(first!, /"abcd" matches 2 sessions in /, c.join(" "));
      assert.ok(first!.includes(`${A}, ${B}; give more of the id`), `${c.join(" ")}: ${first}`);
      assert.equal(second, `Run "penguin help ${words.join(" ")}" for usage.`, c.join(" "));
    }
    // Both twins are still there: nothing was deleted, forked or cloned.
    const list = await runCli(["--root", dir, "sessions", "list", "--json"]);
    assert.equal(JSON.parse(list.stdout).length, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
