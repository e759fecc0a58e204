// `penguin run` end to end: the CLI as a subprocess against the scripted model server.
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseMessageLine } from "../../lib/protocol/validate.ts";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { item, type ModelServerOptions, startModelServer, turn } from "../support/model_server.ts";
import { addModelCli, type CliResult, denoDir, inRoot, runCli, spawnCli } from "../support/cli.ts";
import { hasTmux, penguinScript, startPane } from "../support/tmux.ts";
import { withModelRoot } from "../support/roots.ts";
import { assertGoodTrace, ofKind, requestMessages, type Sandbox } from "../agent/_support.ts";
import { denyWithNote, nopeThenYes } from "./_approval_pane.ts";

type Server = Awaited<ReturnType<typeof startModelServer>>;

function scenario(
  opts: ModelServerOptions,
  body: (
    ctx: {
      server: Server;
      sb: Sandbox;
      run: (args: string[], stdin?: string) => Promise<CliResult>;
    },
  ) => Promise<void>,
): Promise<void> {
  return withModelRoot(opts, (sb, server) =>
    body({
      server,
      sb,
      run: (args, stdin) =>
        runCli(inRoot(sb, "run", ...args), {
          ...(stdin !== undefined ? { stdin } : {}),
        }),
    }));
}

function sessionIdOf(r: CliResult): string {
  const id = /^Session: (session-\S+)$/m.exec(r.stderr)?.[1] ??
    /--resume (session-\S+)/.exec(r.stderr)?.[1];
  assert.ok(id, `a session id in stderr:\n${r.stderr}`);
  return id;
}

Deno.test("run answers a plain prompt: header on stderr, text and stats on stdout, exit 0", async () => {
  const server = await startModelServer({ turns: [turn.text("Hello from the model.")] });
  const dir = await Deno.makeTempDir({ prefix: "penguin-run-" });
  try {
    const root = join(dir, "data");
    await addModelCli(root, server.baseUrl("openai-chat"));
    const r = await runCli(["--root", root, "run", "-m", "Say hello."], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Hello from the model\.\n/);
    assert.match(r.stdout, /^\[stats\] 1 turn · in \S+ · out \S+ · \S+$/m);
    const lines = r.stderr.split("\n");
    assert.equal(lines[0], "penguin run v0.1.0");
    assert.equal(lines[1], "Agent: default_agent");
    assert.equal(lines[2], `Workspace: ${await Deno.realPath(dir)}`);
    assert.equal(lines[3], "Model: m (custom)");
    const sid = sessionIdOf(r);
    assert.match(
      r.stderr,
      new RegExp(`To continue this conversation: penguin chat --resume ${sid} --root ${root}`),
    );
    await assertGoodTrace(root, sid);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("run drives a three-turn tool loop that creates and edits files in the workspace", async () => {
  await scenario({
    turns: [
      turn.toolCall("write_file", {
        file_path: "src/app.txt",
        content: "version = 1\nname = demo\n",
      }),
      turn.toolCall("edit_file", {
        file_path: "src/app.txt",
        old_string: "version = 1",
        new_string: "version = 2",
      }),
      turn.text("Bumped the version."),
    ],
  }, async ({ server, sb, run }) => {
    const r = await run(["-m", "Create the app file, then bump its version."]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      await Deno.readTextFile(join(sb.workspace, "src/app.txt")),
      "version = 2\nname = demo\n",
    );
    assert.equal(server.requests.length, 3);
    const second = requestMessages(server, 1);
    assert.equal(second.at(-1)?.role, "tool");
    const bytes = new TextEncoder().encode("version = 1\nname = demo\n").length;
    assert.equal(
      String(second.at(-1)?.content),
      `Created "src/app.txt" (2 lines, ${bytes} bytes).`,
    );
    assert.match(String(requestMessages(server, 2).at(-1)?.content), /^Replaced 1 occurrence/);
    assert.match(r.stdout, /\[#\d+\] write_file .*app\.txt/);
    // Under allow-all nobody decided anything: no approval lines.
    assert.doesNotMatch(r.stdout, /\[approved\]/);
    assert.match(r.stdout, /Bumped the version\./);
    await assertGoodTrace(sb.root, sessionIdOf(r));
  });
});

Deno.test("run executes two tool calls of one turn and feeds the outputs back in call order", async () => {
  await scenario({
    turns: [
      turn.of(
        item.toolCall(
          "exec_command",
          // Finishes after the write_file call: it waits for that file.
          {
            cmd: "until [ -e two.txt ]; do sleep 0.02; done; echo one > one.txt",
            description: "one",
          },
          { id: "c1" },
        ),
        item.toolCall("write_file", { file_path: "two.txt", content: "two\n" }, { id: "c2" }),
      ),
      turn.text("Both written."),
    ],
  }, async ({ server, sb, run }) => {
    const r = await run(["-m", "Write two files."]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await Deno.readTextFile(join(sb.workspace, "one.txt")), "one\n");
    assert.equal(await Deno.readTextFile(join(sb.workspace, "two.txt")), "two\n");
    const fed = requestMessages(server, 1).filter((m) => m.role === "tool").map((m) =>
      m.tool_call_id
    );
    assert.deepEqual(fed, ["c1", "c2"]);
    // The trace records each output when its call completes. Which completes first is a race: the
    // command sees two.txt the moment write_file has written it, which may be before write_file's
    // own output is recorded. So only one output each is asserted here, not their order.
    const records = await assertGoodTrace(sb.root, sessionIdOf(r));
    assert.deepEqual(
      ofKind(records, "tool_call_output").map((o) => o.tool_call_id).sort(),
      ["c1", "c2"],
    );
  });
});

Deno.test("run --approve deny-all denies every call and says so", async () => {
  await scenario({
    turns: [
      turn.toolCall("write_file", { file_path: "x.txt", content: "x" }),
      turn.text("Denied, fine."),
    ],
  }, async ({ sb, run }) => {
    const r = await run(["-m", "Write x.", "--approve", "DENY-ALL"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^× \[denied\] — approval mode deny-all$/m);
    await assert.rejects(Deno.stat(join(sb.workspace, "x.txt")), Deno.errors.NotFound);
    const records = await assertGoodTrace(sb.root, sessionIdOf(r));
    assert.equal(
      ofKind(records, "tool_call_output")[0]!.output,
      "Tool call denied by user. Reason: approval mode deny-all.",
    );
    assert.equal(ofKind(records, "approval_decision")[0]!.reason, "approval mode deny-all");
  });
});

Deno.test("run --approve read-only without a terminal runs read_file, denies write_file and says why; piped input never answers", async () => {
  const turns = () => [
    turn.of(
      item.toolCall("write_file", { file_path: "w.txt", content: "w" }, { id: "w" }),
      item.toolCall("read_file", { file_path: "r.txt" }, { id: "r" }),
    ),
    turn.text("Done."),
  ];
  for (const stdin of [undefined, "y\n"]) {
    await scenario({ turns: turns() }, async ({ sb, run }) => {
      await Deno.writeTextFile(join(sb.workspace, "r.txt"), "readable\n");
      const r = await run(["-m", "Read and write.", "--approve", "read-only"], stdin);
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stderr, /Approve this tool call/);
      const why = "approval mode read-only runs only read tools when there is no one to ask";
      assert.ok(r.stdout.includes(`× [denied] — ${why}\n`), r.stdout);
      await assert.rejects(Deno.stat(join(sb.workspace, "w.txt")), Deno.errors.NotFound);
      const records = await assertGoodTrace(sb.root, sessionIdOf(r));
      const d = ofKind(records, "approval_decision").map((x) => [x.tool_call_id, x.decision]);
      assert.deepEqual(d, [["w", "deny"], ["r", "allow"]]);
      const outputs = ofKind(records, "tool_call_output");
      assert.equal(
        outputs.find((o) => o.tool_call_id === "w")!.output,
        `Tool call denied by user. Reason: ${why}.`,
      );
      assert.match(String(outputs.find((o) => o.tool_call_id === "r")!.output), /readable/);
    });
  }
});

Deno.test("run --approve always-ask without a terminal is a usage error before anything starts", async () => {
  await scenario({ turns: [turn.text("never")] }, async ({ server, sb, run }) => {
    const r = await run(["-m", "Write p.", "--approve", "always-ask"], "y\n");
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^penguin: run: approval mode always-ask needs a terminal to answer its prompts, and there is none \(input is piped and \/dev\/tty is unavailable\): pass --approve read-only, deny-all or allow-all$/m,
    );
    assert.equal(server.requests.length, 0);
    await assert.rejects(
      Deno.stat(join(sb.root, "default_project", "agents", "default_agent", "traces")),
      Deno.errors.NotFound,
    );
  });
});

Deno.test("run --approve always-ask chosen by penguin.jsonc without a terminal names the file", async () => {
  await scenario({ turns: [turn.text("never")] }, async ({ sb, run }) => {
    await Deno.writeTextFile(join(sb.workspace, "penguin.jsonc"), '{ "approval": "always-ask" }\n');
    const r = await run(["-m", "Write p."]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /approval mode always-ask needs a terminal .*: \S*penguin\.jsonc sets it; run from a terminal, or change "approval" there$/m,
    );
  });
});

Deno.test("run forbids rm -rf / under allow-all without running anything", async () => {
  await scenario({
    turns: [
      turn.toolCall("exec_command", { cmd: "rm -rf / && touch ran.txt", description: "wipe" }),
      turn.text("Refused."),
    ],
  }, async ({ sb, run }) => {
    const r = await run(["-m", "Clean up everything."]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^× \[forbidden by policy\] — policy rule "rm-recursive-force"$/m);
    await assert.rejects(Deno.stat(join(sb.workspace, "ran.txt")), Deno.errors.NotFound);
    const records = await assertGoodTrace(sb.root, sessionIdOf(r));
    assert.equal(
      ofKind(records, "tool_call_output")[0]!.output,
      'Tool call denied by policy. Reason: policy rule "rm-recursive-force".',
    );
  });
});

/**
 * Spawn `penguin run --json`, send it `signal` on the first delta of a
 * `partial` message, and check that it exited 1 with a
 * valid trace, whose records it returns.
 */
async function runAndSignal(
  sb: Sandbox,
  args: string[],
  signal: Deno.Signal,
  partial: "partial_text" | "partial_tool_call_output",
): Promise<OmniMessage[]> {
  const child = spawnCli(inRoot(sb, "run", "--json", ...args));
  const stderr = new Response(child.stderr).text();
  let sent = false;
  let buf = "";
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const m = JSON.parse(line) as OmniMessage;
      if (!sent && m.payload.type === partial && m.payload.event_type === "delta") {
        sent = true;
        child.kill(signal);
      }
    }
  }
  const status = await child.status;
  const err = await stderr;
  assert.equal(status.code, 1, err);
  const sid = /--resume (session-\S+)/.exec(err)![1]!;
  return await assertGoodTrace(sb.root, sid);
}

Deno.test("SIGINT mid-stream aborts the task: exit 1, abort recorded, trace valid", async () => {
  await scenario({
    turns: [{ ...turn.text("A long story that never quite finishes"), chunk: 4, stall_after: 4 }],
    maxHoldMs: 20_000,
  }, async ({ sb }) => {
    const records = await runAndSignal(sb, ["-m", "Tell a story."], "SIGINT", "partial_text");
    assert.deepEqual(ofKind(records, "abort").map((a) => a.reason), ["aborted by user"]);
    assert.equal(ofKind(records, "request_end").at(-1)!.status, "aborted");
  });
});

Deno.test("SIGTERM mid-tool stops a long command: exit 1, aborted output recorded, trace valid", async () => {
  await scenario({
    turns: [
      turn.toolCall("exec_command", { cmd: "echo begin; sleep 30", description: "long" }),
      turn.text("x"),
    ],
  }, async ({ sb }) => {
    const started = Date.now();
    const records = await runAndSignal(sb, ["-m", "Wait."], "SIGTERM", "partial_tool_call_output");
    assert.ok(Date.now() - started < 25_000, "the sleep was cut short");
    const out = ofKind(records, "tool_call_output")[0]!;
    assert.equal(out.stop_reason, "aborted");
    assert.match(String(out.output), /\[interrupted: tool aborted by user\]/);
    assert.deepEqual(ofKind(records, "abort").map((a) => a.reason), ["aborted by user"]);
  });
});

for (const signal of ["SIGHUP", "SIGQUIT", "SIGALRM", "SIGXCPU", "SIGABRT", "SIGIO"] as const) {
  Deno.test(`${signal} mid-tool ends the session as SIGTERM does: its last walk disarms a planted repo`, async () => {
    // Attack passes final14-concgit S3/S4, final15 N9/N10, final16 G6–G8: a hangup (terminal or ssh gone),
    // Ctrl-\, SIGALRM or a CPU-time limit's SIGXCPU ended penguin at once, before the session's
    // end, and an armed repository the command made stayed armed.
    await scenario({
      turns: [
        turn.toolCall("exec_command", {
          cmd: "git init -q R && git -C R config core.fsmonitor 'touch pwned' && echo begin; " +
            "sleep 30",
          description: "plant",
        }),
        turn.text("x"),
      ],
    }, async ({ sb }) => {
      const records = await runAndSignal(sb, ["-m", "Wait."], signal, "partial_tool_call_output");
      assert.deepEqual(ofKind(records, "abort").map((a) => a.reason), ["aborted by user"]);
      await assert.rejects(Deno.lstat(join(sb.workspace, "R", ".git")), Deno.errors.NotFound);
      const aside = (await Array.fromAsync(Deno.readDir(join(sb.workspace, "R")))).map((e) =>
        e.name
      );
      assert.ok(aside.some((n) => n.startsWith(".git-disarmed")), aside.join(" "));
    });
  });
}

Deno.test("run retries a provider error after the 2 s backoff and then succeeds", async () => {
  await scenario(
    { turns: [turn.error(500), turn.text("Second time lucky.")] },
    async ({ sb, run }) => {
      const r = await run(["-m", "Try."]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /\[retry\] /);
      assert.match(r.stdout, /Second time lucky\./);
      const records = await assertGoodTrace(sb.root, sessionIdOf(r));
      const ends = ofKind(records, "request_end");
      assert.ok(ends[0]!.status === "failed" || ends[0]!.status === "timeout");
      assert.deepEqual([ends[0]!.attempt, ends[0]!.retry_in_ms], [1, 2000]);
      assert.deepEqual([ends[1]!.status, ends[1]!.attempt], ["completed", 2]);
    },
  );
});

Deno.test("run polls a backgrounded command with input_command until it finishes", async () => {
  await scenario({
    handler: (req, i) => {
      if (i === 0) {
        return turn.toolCall("exec_command", {
          cmd: "sleep 0.5; echo finished-late",
          description: "slow",
          yield_time_ms: 250,
        });
      }
      if (i === 1) {
        const last = (req.body as { messages: { content: string }[] }).messages.at(-1)!.content;
        const id = /proc-[0-9a-f]{8}/.exec(last)?.[0] ?? "proc-missing";
        return turn.toolCall("input_command", { process_id: id, description: "poll" });
      }
      return i === 2 ? turn.text("It finished.") : undefined;
    },
  }, async ({ server, sb, run }) => {
    const r = await run(["-m", "Run and poll."]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(String(requestMessages(server, 2).at(-1)?.content), /finished-late/);
    await assertGoodTrace(sb.root, sessionIdOf(r));
  });
});

Deno.test("run --json prints only OmniMessage JSONL, partials included", async () => {
  await scenario({
    turns: [
      turn.toolCall("write_file", { file_path: "j.txt", content: "j" }),
      turn.text("JSON done."),
    ],
  }, async ({ sb, run }) => {
    const r = await run(["-m", "Write j.", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split("\n");
    for (const line of lines) {
      const parsed = parseMessageLine(line);
      assert.ok(parsed.ok, `valid OmniMessage: ${line.slice(0, 120)}`);
    }
    const types = lines.map((l) => (JSON.parse(l) as OmniMessage).payload.type);
    assert.ok(types.includes("partial_text") && types.includes("partial_tool_call_output"));
    // The session id comes first, as the session_meta record.
    const meta = JSON.parse(lines[0]!) as OmniMessage;
    assert.equal(meta.type, "session_meta");
    assert.equal(meta.type === "session_meta" && meta.payload.session_id, sessionIdOf(r));
    assert.equal(types[1], "tool_list_ready");
    assert.ok(!r.stderr.includes("penguin run v"), "no header in --json mode");
    await assertGoodTrace(sb.root, sessionIdOf(r));
  });
});

Deno.test("run reads the message from stdin with -m -, sends --thinking, and stops with exit 1 at --max-turns", async () => {
  await scenario({
    turns: [turn.toolCall("read_file", { file_path: "a.txt" }), turn.text("never")],
  }, async ({ server, sb, run }) => {
    const r = await run(
      ["-m", "-", "--max-turns", "1", "--thinking", "LOW"],
      "Message from stdin.\n",
    );
    assert.equal(r.code, 1, r.stderr);
    assert.equal(requestMessages(server, 0).at(-1)?.content, "Message from stdin.");
    assert.equal(
      (server.requests[0]!.body as { reasoning_effort?: string }).reasoning_effort,
      "low",
    );
    assert.match(r.stdout, /\[reached max turns \(1\); stopping\]/);
    await assertGoodTrace(sb.root, sessionIdOf(r));
  });
});

Deno.test("run rejects bad flags and configuration with exit 2 before any request", async () => {
  await scenario({ turns: [] }, async ({ server, run }) => {
    const cases: [string[], RegExp][] = [
      [["-m", "x", "--provider", "custom"], /--model-id and --provider must be given together/],
      [["-m", "x", "--model-id", "m"], /--model-id and --provider must be given together/],
      [
        ["-m", "x", "--approve", "sometimes"],
        /--approve must be one of allow-all, deny-all, read-only, always-ask/,
      ],
      [
        ["-m", "x", "--thinking", "extreme"],
        /--thinking must be one of none, low, medium, high, xhigh, max/,
      ],
      [
        ["-m", "x", "--sandbox", "loose"],
        /--sandbox must be one of workspace-write, read-only, off/,
      ],
      [["-m", "x", "--network", "maybe"], /--network must be on or off/],
      [["-m", "x", "--max-turns", "many"], /--max-turns must be an integer/],
      [["-m", "x", "--workspace", "/nonexistent/dir"], /the workspace does not exist/],
      [["-m", "x", "--provider", "custom", "--model-id", "zzz"], /No model \(custom, zzz\)/],
      [[], /-m\/--message is required/],
    ];
    for (const [args, re] of cases) {
      const r = await run(args);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, re);
    }
    assert.equal(server.requests.length, 0);
  });
});

Deno.test("run refuses a command-policy rule with an invalid regex as a config error (exit 2) before any session starts", async () => {
  await scenario({ turns: [turn.toolCall("exec_command", { cmd: "touch ran.txt" })] }, async (
    { server, sb, run },
  ) => {
    const config = join(sb.root, "default_project", ".project_config.toml");
    const before = await Deno.readTextFile(config);
    const index = before.split("[[command_policy.rules]]").length - 1;
    const text = before + '\n[[command_policy.rules]]\nname = "no-touch"\npattern = "touch (ran"\n';
    await Deno.writeTextFile(config, text);
    const line = text.split("\n").indexOf('pattern = "touch (ran"') + 1;
    const r = await run(["-m", "Touch it."]);
    assert.equal(r.code, 2, r.stderr);
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.match(
      lines[0]!,
      new RegExp(
        `^penguin: Invalid "${config.replaceAll(".", "\\.")}": line ${line}, column 1: ` +
          `command_policy\\.rules\\[${index}\\]\\.pattern: ` +
          String
            .raw`rule "no-touch" has an invalid regular expression "touch \(ran" \(Unterminated group\)`,
      ),
    );
    assert.equal(server.requests.length, 0);
    await assert.rejects(Deno.stat(join(sb.workspace, "ran.txt")), Deno.errors.NotFound);
    await assert.rejects(
      Deno.stat(join(sb.root, "default_project", "agents", "default_agent", "traces")),
      Deno.errors.NotFound,
    );
  });
});

Deno.test("run --sandbox off warns on stderr", async () => {
  await scenario({ turns: [turn.text("ok")] }, async ({ run }) => {
    const r = await run(["-m", "x", "--sandbox", "off"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /warning: --sandbox off/);
  });
});

Deno.test({
  name:
    "run in a terminal asks on it: an answer other than y/a/n asks again, y approves, n denies and the task goes on",
  ignore: !hasTmux,
  async fn() {
    await scenario({
      turns: [
        turn.of(item.toolCall("write_file", { file_path: "a.txt", content: "a" }, { id: "a" })),
        turn.of(item.toolCall("write_file", { file_path: "p.txt", content: "p" }, { id: "p" })),
        turn.text("Understood."),
      ],
    }, async ({ sb }) => {
      const script = await penguinScript(
        sb.workspace,
        inRoot(sb, "run", "--approve", "always-ask", "-m", "Write a and p."),
        { NO_COLOR: "1" },
      );
      const pane = await startPane(script.command);
      try {
        await pane.waitFor(/\? Approve this tool call\? \[Y\/a\/n\] $/m, "the first prompt");
        await nopeThenYes(pane);
        await pane.waitFor(
          /^✓ \[approved\][\s\S]*\? Approve this tool call\? \[Y\/a\/n\] $/m,
          "prompt 2",
        );
        await denyWithNote(pane);
        const s = await pane.waitFor(/^\[exited \d+\]$/m, "run to exit");
        assert.match(s, /^× \[denied\] — the user answered no$/m);
        assert.match(s, /^Understood\.$/m);
        assert.match(s, /^\[exited 0\]$/m);
        assert.equal(await Deno.readTextFile(join(sb.workspace, "a.txt")), "a");
        await assert.rejects(Deno.stat(join(sb.workspace, "p.txt")), Deno.errors.NotFound);
        const sid = /--resume (session-\S+)/.exec(s)![1]!;
        const records = await assertGoodTrace(sb.root, sid);
        assert.deepEqual(ofKind(records, "approval_decision").map((d) => [d.decision, d.reason]), [
          ["allow", undefined],
          ["deny", "the user answered no"],
        ]);
        assert.equal(ofKind(records, "abort").length, 0);
      } finally {
        await pane.close();
        await Deno.remove(script.path).catch(() => {});
      }
    });
  },
});

Deno.test("run collapses long tool output to head, tail and '… N more lines'; --verbose shows it all", async () => {
  const turns = () => [
    turn.of(
      item.toolCall("exec_command", { cmd: "seq 1 30", description: "count" }, { id: "call_seq" }),
    ),
    turn.text("Counted."),
  ];
  // A clean HOME: no login-shell noise in the command's output.
  const home = await Deno.makeTempDir({ prefix: "penguin-run-home-" });
  const env = { HOME: home, DENO_DIR: denoDir() };
  await scenario({ turns: turns() }, async ({ sb }) => {
    const r = await runCli(
      inRoot(sb, "run", "-m", "Count."),
      {
        env,
      },
    );
    assert.equal(r.code, 0, r.stderr);
    // The output sits under its call line, behind the gutter.
    assert.match(r.stdout, /^\[#1\] exec_command <- .*\n {2}│ 1\n/m);
    const out = r.stdout.split("\n").filter((l) => l.startsWith("  │ "))
      .map((l) => l.slice("  │ ".length));
    assert.deepEqual(out, [
      "1",
      "2",
      "3",
      "4",
      "… 22 more lines (--verbose for full output)",
      "27",
      "28",
      "29",
      "30",
    ]);
  });
  await scenario({ turns: turns() }, async ({ sb }) => {
    const r = await runCli(
      inRoot(sb, "run", "-m", "Count.", "--verbose"),
      { env },
    );
    assert.equal(r.code, 0, r.stderr);
    const out = r.stdout.split("\n").filter((l) => l.startsWith("  │ "));
    assert.equal(out.length, 30);
    assert.doesNotMatch(r.stdout, /more lines/);
  });
  await Deno.remove(home, { recursive: true });
});

Deno.test("run's [stats] line shows totals and the cost at the configured price", async () => {
  const server = await startModelServer({
    turns: [
      turn.toolCall("read_file", { file_path: "a.txt" }),
      turn.text("Read it."),
    ],
  });
  const dir = await Deno.makeTempDir({ prefix: "penguin-run-" });
  try {
    const root = join(dir, "data");
    await addModelCli(root, server.baseUrl("openai-chat"), [
      "--price-cache-read",
      "1",
      "--price-cache-write",
      "10",
      "--price-output",
      "100",
    ]);
    await Deno.writeTextFile(join(dir, "a.txt"), "a\n");
    const r = await runCli(["--root", root, "run", "-m", "Read a.txt."], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    const stats = r.stdout.split("\n").filter((l) => l.startsWith("[stats]"));
    assert.equal(stats.length, 1, r.stdout);
    // The scripted usage per request, priced by hand from the trace.
    const records = await assertGoodTrace(root, sessionIdOf(r));
    let usd = 0;
    let input = 0;
    let output = 0;
    for (const rec of ofKind(records, "token_usage")) {
      const u = rec as { request: { cache_read: number; cache_write: number; output: number } };
      usd += (u.request.cache_read * 1 + u.request.cache_write * 10 + u.request.output * 100) / 1e6;
      input += u.request.cache_read + u.request.cache_write;
      output += u.request.output;
    }
    assert.ok(usd > 0);
    const m = /^\[stats\] 2 turns · in (\S+)(?: \(\S+ cached\))? · out (\S+) · \S+ · \$(\S+)$/.exec(
      stats[0]!,
    );
    assert.ok(m, stats[0]);
    assert.equal(m[1], String(input));
    assert.equal(m[2], String(output));
    assert.ok(Math.abs(Number(m[3]) - usd) / usd < 0.05, `${m[3]} ≈ ${usd}`);
    assert.doesNotMatch(stats[0]!, /\(\+/);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
