// Short call ids: one call shows the same `[#n]` in every view of its session —
// live `run`, `run --resume`, the history `chat --resume` re-renders (piped and
// under tmux), live `chat`, and `trace show` — numbered in trace order,
// parallel calls included, and `/expand` reaches a resumed history's output.
import assert from "node:assert/strict";
import { item, turn } from "../support/model_server.ts";
import { type Sandbox, withModelRoot } from "../support/roots.ts";
import type { ModelServer } from "../support/model_server.ts";
import { runCli, spawnCli } from "../support/cli.ts";
import { compactionAwareServer } from "../agent/_resume_support.ts";
import { hasTmux } from "../support/tmux.ts";
import { expandFirst, inHomePane } from "./_home_pane.ts";

/** The `[#n] exec_command <- $ <cmd>` lines of `text`, as tag → command. */
function tagsOf(text: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const m of text.matchAll(/^\s*(\[#\d+\]) exec_command <- \$ (.+)$/gm)) {
    const [, tag, cmd] = m as unknown as [string, string, string];
    const seen = tags.get(tag);
    assert.ok(seen === undefined || seen === cmd, `${tag} names two calls:\n${text}`);
    tags.set(tag, cmd);
  }
  return tags;
}

function assertTags(text: string, expected: Record<string, string>, view: string): void {
  assert.deepEqual(Object.fromEntries(tagsOf(text)), expected, `${view}:\n${text}`);
}

const exec = (cmd: string, id: string) => item.toolCall("exec_command", { cmd }, { id });

/** `run -m <prompt>` through `cli`: it succeeds, showing exactly the call ids `tags`; its session id. */
async function firstRun(
  cli: ReturnType<typeof cliIn>,
  prompt: string,
  tags: Record<string, string>,
): Promise<string> {
  const first = await cli(["run", "-m", prompt]);
  assert.equal(first.code, 0, first.stderr);
  assertTags(first.stdout, tags, "run");
  return sessionIdOf(first.stderr);
}

function cliIn(sb: Sandbox) {
  return (args: string[], stdin?: string) =>
    runCli(["--root", sb.root, ...args], {
      cwd: sb.workspace,
      ...(stdin !== undefined ? { stdin } : {}),
    });
}

function sessionIdOf(stderr: string): string {
  const id = /^Session: (session-\S+)$/m.exec(stderr)?.[1];
  assert.ok(id, `a session id in:\n${stderr}`);
  return id;
}

Deno.test("a call has one short id in run, run --resume, chat --resume and trace show", async () => {
  await withModelRoot({
    turns: [
      // Two calls in one response: numbered in the order the trace records them.
      turn.of(exec("echo one", "call_zz9"), exec("echo two", "call_aa1")),
      turn.text("Both ran."),
      turn.of(exec("echo three", "call_mm5")),
      turn.text("Three ran."),
      turn.of(exec("echo four", "call_0b0")),
      turn.text("Four ran."),
    ],
  }, async (sb) => {
    const cli = cliIn(sb);
    const sid = await firstRun(cli, "Run two.", { "[#1]": "echo one", "[#2]": "echo two" });

    const resumed = await cli(["run", "--resume", sid, "-m", "One more."]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assertTags(resumed.stdout, { "[#3]": "echo three" }, "run --resume");

    const three = { "[#1]": "echo one", "[#2]": "echo two", "[#3]": "echo three" };
    const shown = await cli(["trace", "show", sid]);
    assert.equal(shown.code, 0, shown.stderr);
    assertTags(shown.stdout, three, "trace show");

    // The history chat --resume re-renders, then a live call numbered after it.
    const chat = await cli(["chat", "--resume", sid], "And another.\n");
    assert.equal(chat.code, 0, chat.stderr);
    const [history, live] = chat.stdout.split("> And another.");
    assert.ok(live !== undefined, chat.stdout);
    assertTags(history!, three, "chat --resume history");
    assertTags(live, { "[#4]": "echo four" }, "chat after --resume");

    const again = await cli(["trace", "show", sid]);
    assertTags(again.stdout, { ...three, "[#4]": "echo four" }, "trace show after chat");
  });
});

Deno.test({
  name:
    "chat --resume under a terminal: the history's ids, the next live id, /expand of a history output",
  ignore: !hasTmux,
  async fn() {
    await withModelRoot({
      turns: [
        turn.of(exec("seq 1 20", "call_s20"), exec("echo two", "call_e2")),
        turn.text("Counted."),
        turn.of(exec("echo three", "call_e3")),
        turn.text("Three ran."),
      ],
    }, async (sb) => {
      const cli = cliIn(sb);
      const sid = await firstRun(cli, "Count.", { "[#1]": "seq 1 20", "[#2]": "echo two" });

      await inHomePane(
        sb.workspace,
        ["--root", sb.root, "chat", "--resume", sid],
        { NO_COLOR: "1" },
        async (pane) => {
          let s = await pane.waitFor(/^\[resumed\] [\s\S]*^>\s*$/m, "the resumed history");
          assertTags(s, { "[#1]": "seq 1 20", "[#2]": "echo two" }, "chat --resume (tmux)");
          // The history collapses the long output and says how to see it whole.
          assert.match(s, /^ {2}│ … 12 more lines \(\/expand #1 for full output\)$/m);
          const full = await expandFirst(pane, "exec_command");
          for (let i = 1; i <= 20; i++) assert.match(full, new RegExp(`^ {2}│ ${i}$`, "m"));

          await pane.type("once more");
          await pane.keys("Enter");
          s = await pane.waitFor(/^Three ran\.\n\[stats\] .*\n>\s*$/m, "the answer");
          assertTags(
            s.slice(s.lastIndexOf("> once more")),
            { "[#3]": "echo three" },
            "live chat after --resume (tmux)",
          );
        },
        120,
        80,
      );
      const shown = await cli(["trace", "show", sid]);
      assertTags(
        shown.stdout,
        { "[#1]": "seq 1 20", "[#2]": "echo two", "[#3]": "echo three" },
        "trace show",
      );
    });
  },
});

/** `trace follow` of `sid` until its output matches `done`; then Ctrl-C. */
async function follow(root: string, sid: string, done: RegExp): Promise<string> {
  const child = spawnCli(["--root", root, "trace", "follow", "--interval", "20", sid]);
  // A failsafe only: a follow that never shows `done` is stopped so the test fails.
  const failsafe = setTimeout(() => child.kill("SIGKILL"), 120_000);
  const reader = child.stdout.getReader();
  const dec = new TextDecoder();
  let text = "";
  try {
    while (!done.test(text)) {
      const chunk = await reader.read();
      if (chunk.done) throw new Error(`trace follow ended early; it printed:\n${text}`);
      text += dec.decode(chunk.value, { stream: true });
    }
    child.kill("SIGINT");
    await reader.cancel();
    assert.equal((await child.status).code, 0);
  } finally {
    clearTimeout(failsafe);
    await child.stderr.cancel().catch(() => {});
  }
  return text;
}

Deno.test("after a compaction, resumed runs and trace follow go on numbering from the session's first file", async () => {
  const server: ModelServer = await compactionAwareServer(
    [
      turn.of(exec("echo one", "call_o1")),
      turn.text("One ran."),
      turn.of(exec("echo two", "call_t2")),
      turn.text("Two ran."),
      turn.of(exec("echo three", "call_h3")),
      turn.text("Three ran."),
    ],
    [turn.text("[summary]Ran echo one.[/summary]")],
  );
  await withModelRoot(server, async (sb) => {
    const cli = cliIn(sb);
    const sid = await firstRun(cli, "One.", { "[#1]": "echo one" });
    const compacted = await cli(["sessions", "compact", sid]);
    assert.equal(compacted.code, 0, compacted.stderr);

    // The first file is closed: this run writes the second, whose context holds no call yet.
    const second = await cli(["run", "--resume", sid, "-m", "Two."]);
    assert.equal(second.code, 0, second.stderr);
    assertTags(second.stdout, { "[#2]": "echo two" }, "run --resume after the compaction");
    const third = await cli(["run", "--resume", sid, "-m", "Three."]);
    assert.equal(third.code, 0, third.stderr);
    assertTags(third.stdout, { "[#3]": "echo three" }, "run --resume in the second file");

    const all = { "[#1]": "echo one", "[#2]": "echo two", "[#3]": "echo three" };
    const shown = await cli(["trace", "show", sid]);
    assertTags(shown.stdout, all, "trace show");
    assert.match(shown.stdout, /── new context \(after compaction\)/);

    // trace follow starts at the latest file, numbered as trace show numbers it.
    const followed = await follow(sb.root, sid, /^Three ran\.$/m);
    assertTags(followed, { "[#2]": "echo two", "[#3]": "echo three" }, "trace follow");
  });
});
