import assert from "node:assert/strict";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { addModelCli, denoDir, inRoot, modelAddArgs, runCli } from "../support/cli.ts";
import { hasTmux, penguinScript, startPane } from "../support/tmux.ts";
import {
  item,
  type ModelServer,
  type ModelServerOptions,
  type ScriptedTurn,
  startModelServer,
  turn,
} from "../support/model_server.ts";
import {
  createLineEditor,
  displayWidth,
  layoutInput,
  redrawInput,
} from "../../lib/cli/_line_editor.ts";
import { denyWithNote, nopeThenYes } from "./_approval_pane.ts";

Deno.test("line editor submits on Enter and edits with backspace, arrows and Ctrl-U", () => {
  const e = createLineEditor();
  assert.deepEqual(e.feed("helo"), []);
  e.feed("\x1b[D\x1b[D"); // cursor after "he"
  e.feed("l");
  assert.equal(e.text(), "hello");
  e.feed("\x1b[F\x7f\x7f");
  assert.equal(e.text(), "hel");
  e.feed("\x15");
  assert.equal(e.text(), "");
  assert.deepEqual(e.feed("ok\r"), [{ type: "submit", text: "ok" }]);
  assert.equal(e.text(), "");
});

/**
 * Messages of more than one line: `chunks` fed one by one submit nothing and
 * leave `text` in the editor; `enter` then submits `submitted`.
 */
const MULTILINE: {
  name: string;
  chunks: string[];
  text: string;
  enter: string;
  submitted: string;
}[] = [
  {
    name: "a trailing backslash continues the message on a new line",
    chunks: ["first \\\r"],
    text: "first \n",
    enter: "second\r",
    submitted: "first \nsecond",
  },
  {
    name: "bracketed paste keeps newlines as one message, even split across chunks",
    chunks: ["\x1b[200~line one\r\nline", " two\x1b[20", "1~"],
    text: "line one\nline two",
    enter: "\r",
    submitted: "line one\nline two",
  },
  {
    name: "Alt-Enter and Ctrl-J insert a newline; Enter submits the whole message",
    chunks: ["one\x1b\rtwo\nthree"],
    text: "one\ntwo\nthree",
    enter: "\r",
    submitted: "one\ntwo\nthree",
  },
];

for (const c of MULTILINE) {
  Deno.test(c.name, () => {
    const e = createLineEditor();
    for (const chunk of c.chunks) assert.deepEqual(e.feed(chunk), []);
    assert.equal(e.text(), c.text);
    assert.deepEqual(e.feed(c.enter), [{ type: "submit", text: c.submitted }]);
  });
}

Deno.test("Ctrl-C is an event and Ctrl-D ends input only on an empty buffer", () => {
  const e = createLineEditor();
  assert.deepEqual(e.feed("ab\x03"), [{ type: "interrupt" }]);
  assert.equal(e.text(), "ab");
  assert.deepEqual(e.feed("\x04"), []);
  e.clear();
  assert.deepEqual(e.feed("\x04"), [{ type: "eof" }]);
});

Deno.test("an escape sequence cut at a chunk boundary is completed by the next chunk", () => {
  const e = createLineEditor();
  e.feed("xy\x1b[");
  e.feed("D!");
  assert.equal(e.text(), "x!y");
});

Deno.test("a lone Escape is reported and never swallows the key after it, in one read or two", () => {
  const e = createLineEditor();
  assert.deepEqual(e.feed("\x1b"), [{ type: "escape" }]);
  assert.deepEqual(e.feed("hello"), []);
  assert.equal(e.text(), "hello");
  e.clear();
  assert.deepEqual(e.feed("\x1bsteer me"), [{ type: "escape" }]);
  assert.equal(e.text(), "steer me");
  e.clear();
  assert.deepEqual(e.feed("\x1b\x1bx"), [{ type: "escape" }, { type: "escape" }]);
  assert.equal(e.text(), "x");
});

Deno.test("only CSI and SS3 sequences are consumed: arrows, Delete and unknown keys leave no text", () => {
  const e = createLineEditor();
  e.feed("abc\x1bOD\x1b[D!"); // SS3 left, CSI left
  assert.equal(e.text(), "a!bc");
  e.feed("\x1b[1;5C\x1b[15~\x1bOP"); // Ctrl-Right, F5, F1: ignored
  assert.equal(e.text(), "a!bc");
  e.feed("\x1b[3~");
  assert.equal(e.text(), "a!c");
  e.feed("\x1bO");
  e.feed("C?");
  assert.equal(e.text(), "a!c?");
});

Deno.test("Up and Down walk the history from the first and last line, and bring the draft back", () => {
  const e = createLineEditor(["older", "multi\nline"]);
  e.feed("dra");
  e.feed("\x1b[A");
  assert.equal(e.text(), "multi\nline");
  e.feed("\x1b[A"); // on the last line of a two-line entry: moves up a line first
  assert.equal(e.text(), "multi\nline");
  assert.equal(e.cursor(), 4);
  e.feed("\x1b[A");
  assert.equal(e.text(), "older");
  e.feed("\x1b[A");
  assert.equal(e.text(), "older", "the oldest entry stays");
  e.feed("\x1b[B");
  assert.equal(e.text(), "multi\nline");
  e.feed("\x1b[B");
  assert.equal(e.text(), "dra", "the draft comes back");
  e.feed("\x1b[B");
  assert.equal(e.text(), "dra");
  e.remember("new");
  e.remember("new");
  e.remember("  ");
  assert.deepEqual(e.history(), ["older", "multi\nline", "new"]);
});

Deno.test("input layout counts wide characters and soft wraps", () => {
  assert.equal(displayWidth("企鹅ok"), 6);
  const l = layoutInput("> ", "… ", "abcdefgh\nxy", 11, 8);
  // "> abcdefgh" is 10 columns: rows 0-1; "… xy" on row 2, cursor after "xy".
  assert.deepEqual({ row: l.cursorRow, col: l.cursorCol, end: l.endRow }, {
    row: 2,
    col: 4,
    end: 2,
  });
  assert.equal(l.text, "> abcdefgh\r\n… xy");
  const mid = layoutInput("> ", "… ", "abcdefgh\nxy", 3, 8);
  assert.deepEqual([mid.cursorRow, mid.cursorCol], [0, 5]);
  assert.equal(redrawInput(2, mid), "\x1b[2A\r\x1b[J> abcdefgh\r\n… xy\x1b[2A\r\x1b[5C");
});

// ---------------------------------------------------------------------------
// `penguin chat` end to end, against the scripted model server.
// ---------------------------------------------------------------------------

interface ChatEnv {
  root: string;
  workspace: string;
  server: ModelServer;
  /** Environment for the CLI: a clean HOME, so no login-shell noise reaches tool output. */
  env: Record<string, string>;
}

async function withChatEnv(
  turns: ScriptedTurn[],
  fn: (env: ChatEnv) => Promise<void>,
  serverOpts: Partial<ModelServerOptions> = {},
): Promise<void> {
  const server = await startModelServer({ turns, ...serverOpts });
  const root = await Deno.makeTempDir({ prefix: "penguin-chat-root-" });
  const workspace = await Deno.makeTempDir({ prefix: "penguin-chat-ws-" });
  const home = await Deno.makeTempDir({ prefix: "penguin-chat-home-" });
  const env = { HOME: home, DENO_DIR: denoDir() };
  try {
    await addModelCli(
      root,
      server.baseUrl("openai-chat"),
      ["--api-key", "sk-test"],
      "scripted-model",
    );
    await fn({ root, workspace, server, env });
  } finally {
    await server.close();
    await Deno.remove(home, { recursive: true });
    await Deno.remove(root, { recursive: true });
    await Deno.remove(workspace, { recursive: true });
  }
}

/** Every trace file under `root`. */
async function traceFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for await (const e of Deno.readDir(dir)) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(p);
      else if (/^session-.*\.jsonl$/.test(e.name)) out.push(p);
    }
  };
  await walk(root);
  return out;
}

/** Every record of the session's trace files. */
async function traceRecords(root: string, sessionId: string): Promise<OmniMessage[]> {
  const out: OmniMessage[] = [];
  const walk = async (dir: string): Promise<void> => {
    for await (const e of Deno.readDir(dir)) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(p);
      else if (e.name.startsWith(sessionId) && e.name.endsWith(".jsonl")) {
        for (const line of (await Deno.readTextFile(p)).split("\n")) {
          if (line.trim() !== "") out.push(JSON.parse(line));
        }
      }
    }
  };
  await walk(root);
  return out;
}

Deno.test("chat with piped stdin runs one task per line, then prints the resume command", async () => {
  await withChatEnv([
    turn.text("First answer."),
    turn.toolCall("exec_command", { cmd: "echo hi from the tool" }),
    turn.text("Second answer."),
  ], async ({ root, workspace, server, env }) => {
    const r = await runCli(["--root", root, "chat", "--workspace", workspace], {
      stdin: "say something\nnow run a command\n",
      env,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!r.stdout.includes("\x1b"), "no escape codes in piped output");
    const sid = /^Session: (session-\S+)$/m.exec(r.stdout)?.[1];
    assert.ok(sid, r.stdout);
    const body = r.stdout.slice(r.stdout.indexOf("> say something"));
    assert.match(
      body,
      /^> say something\nFirst answer\.\n\[stats\] context 120 \(\+120\) · tokens 120 \(\+120\) · \S+ \(\+\S+\)\n> now run a command\n\[#1\] exec_command <- \$ echo hi from the tool\n {2}│ hi from the tool\nSecond answer\.\n\[stats\] context 120 \(\+0\) · tokens 360 \(\+240\)/,
    );
    assert.ok(
      r.stdout.endsWith(
        `To continue this conversation: penguin chat --resume ${sid} --root ${root}\n`,
      ),
      r.stdout,
    );
    assert.equal(server.requests.length, 3);
    const prompts = (await traceRecords(root, sid)).filter((m) =>
      m.type === "model_msg" && m.payload.type === "text" && m.payload.role === "user"
    ).map((m) => (m.payload as { text: string }).text);
    assert.deepEqual(prompts, ["say something", "now run a command"]);
  });
});

// ---------------------------------------------------------------------------
// The interactive REPL under a pseudo-terminal (tmux).
// ---------------------------------------------------------------------------

Deno.test({
  name:
    "chat in a terminal: approve a tool call, steer and interrupt a task, exit with the resume command",
  ignore: !hasTmux,
  async fn() {
    await withChatEnv([
      turn.of(
        item.thinking("The user wants the files."),
        item.toolCall("exec_command", { cmd: "printf 'alpha\\nbeta\\n'" }),
      ),
      turn.text("The tool said alpha and beta."),
      { ...turn.text("Thinking about a very long answer to this question"), stall_after: 3 },
    ], async ({ root, workspace, env }) => {
      const script = await penguinScript(workspace, [
        "--root",
        root,
        "chat",
        "--workspace",
        workspace,
        "--approve",
        "always-ask",
      ], env);
      const pane = await startPane(script.command);
      try {
        const start = await pane.waitFor(/^Session: session-\S+\n[\s\S]*^>\s*$/m, "the prompt");
        const sid = /^Session: (session-\S+)$/m.exec(start)![1]!;

        await pane.type("list the files");
        await pane.keys("Enter");
        await pane.waitFor(/\? Approve this tool call\? \[Y\/a\/n\]\s*$/m, "the approval prompt");
        await pane.type("nope");
        await pane.keys("Enter");
        await pane.waitFor(
          /\[Y\/a\/n\] nope\nPlease answer y \(yes, or Enter\), a \(yes, for the rest of this session\) or n \(no\); Esc or Ctrl-C stops the task\.\n\? Approve this tool call\? \[Y\/a\/n\]\s*$/m,
          "the question asked again",
        );
        await pane.type("y");
        await pane.keys("Enter");
        let s = await pane.waitFor(/^\[stats\] /m, "the first task's stats line");
        assert.match(
          s,
          /^> list the files\nThe user wants the files\.\n\[#1\] exec_command <- \$ printf 'alpha\\nbeta\\n'\n {2}\$ printf 'alpha\\nbeta\\n'\n {2}y yes · a yes, and don't ask again this session for this exact command · n no, and tell the model\n {2}Esc or Ctrl-C stops the task\n\? Approve this tool call\? \[Y\/a\/n\] nope\nPlease answer y \(yes, or Enter\), a \(yes, for the rest of this session\) or n \(no\); Esc or Ctrl-C stops the task\.\n\? Approve this tool call\? \[Y\/a\/n\] y\n✓ \[approved\]\n {2}│ alpha\n {2}│ beta\nThe tool said alpha and beta\.\n\[stats\] context 120 \(\+120\) · tokens 240 \(\+240\) · /m,
        );

        await pane.waitFor(/^\[stats\] .*\n>\s*$/m, "the prompt after the first task");
        await pane.type("tell me a long story");
        await pane.keys("Enter");
        // The last characters streamed may be held back by the secret masker (they could begin a
        // secret's hex or base64 form) until more comes: wait for the words before them.
        await pane.waitFor(/^Thinking about/m, "the stalled answer to start streaming");
        await pane.type("and make it short");
        await pane.keys("Enter");
        await pane.waitFor(
          /^» steering queued \(delivered with the next turn\): and make it short$/m,
          "the steering notice",
        );
        await pane.keys("C-c");
        s = await pane.waitFor(/^\[current conversation interrupted\]\n>\s*$/m, "the interruption");
        // On a loaded machine the stalled stream may have been retried meanwhile: Ctrl-C then
        // lands in the reconnect backoff, an interruption all the same.
        assert.match(
          s,
          /^\[abort\]: aborted (?:by user|during reconnect backoff)\n\[current conversation interrupted\]$/m,
        );

        await pane.type("/exit");
        await pane.keys("Enter");
        s = await pane.waitFor(/^\[exited \d+\]$/m, "chat to exit");
        assert.match(
          s,
          new RegExp(
            `^To continue this conversation: penguin chat --resume ${sid} --root ${root}\\n\\[exited 0\\]$`,
            "m",
          ),
        );

        const trace = await traceRecords(root, sid);
        const events = trace.filter((m) => m.type === "event_msg").map((m) => m.payload);
        assert.ok(
          events.some((e) => e.type === "approval_decision" && e.decision === "allow"),
          "the approval is in the trace",
        );
        assert.deepEqual(events.filter((e) => e.type === "abort"), [{
          type: "abort",
          reason: "aborted by user",
        }]);
      } finally {
        await pane.close();
        await Deno.remove(script.path).catch(() => {});
      }
    });
  },
});

Deno.test({
  name:
    "chat in a terminal: a bracketed paste is one message; Ctrl-C clears, then asks, then exits",
  ignore: !hasTmux,
  async fn() {
    await withChatEnv([turn.text("Got two lines.")], async ({ root, workspace, env }) => {
      const script = await penguinScript(
        workspace,
        ["--root", root, "chat", "--workspace", workspace],
        { ...env, NO_COLOR: "1" },
      );
      const pane = await startPane(script.command);
      try {
        const start = await pane.waitFor(/^Session: session-\S+\n[\s\S]*^>\s*$/m, "the prompt");
        const sid = /^Session: (session-\S+)$/m.exec(start)![1]!;
        await pane.paste("line one\nline two");
        await pane.waitFor(/^> line one\n… line two\s*$/m, "the pasted message in the input");
        await pane.keys("Enter");
        await pane.waitFor(/^Got two lines\.\n\[stats\] .*\n>\s*$/m, "the answer");

        await pane.type("a draft");
        await pane.waitFor(/^> a draft\s*$/m, "the draft");
        await pane.keys("C-c");
        await pane.waitFor(/^\[stats\] .*\n>\s*$/m, "the cleared input");
        await pane.keys("C-c");
        await pane.waitFor(/^> \^C\nExit penguin\? \[y\/N\]\s*$/m, "the exit question");
        await pane.keys("C-c");
        const s = await pane.waitFor(/^\[exited \d+\]$/m, "chat to exit");
        assert.match(
          s,
          new RegExp(
            `^Exit penguin\\? \\[y/N\\] \\^C\\nTo continue this conversation: penguin chat --resume ${sid} --root ${root}\\n\\[exited 0\\]$`,
            "m",
          ),
        );
        const prompts = (await traceRecords(root, sid)).filter((m) =>
          m.type === "model_msg" && m.payload.type === "text" && m.payload.role === "user"
        ).map((m) => (m.payload as { text: string }).text);
        assert.deepEqual(prompts, ["line one\nline two"]);
      } finally {
        await pane.close();
        await Deno.remove(script.path).catch(() => {});
      }
    });
  },
});

Deno.test("chat with piped stdin and no terminal refuses always-ask as a usage error, before any session", async () => {
  await withChatEnv([], async ({ root, workspace, env, server }) => {
    const r = await runCli(
      ["--root", root, "chat", "--workspace", workspace, "--approve", "always-ask"],
      { stdin: "first\nn\nsecond\n", env },
    );
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^penguin: chat: approval mode always-ask needs a terminal to answer its prompts, and there is none \(input is piped and \/dev\/tty is unavailable\): pass --approve read-only, deny-all or allow-all$/m,
    );
    assert.equal(r.stdout, "");
    assert.equal(server.requests.length, 0);
    assert.deepEqual(await traceFiles(root), [], "no session was started");
  });
});

Deno.test("chat with piped stdin and no terminal: read-only denies writes and says why; piped lines stay tasks", async () => {
  await withChatEnv([
    turn.of(item.toolCall("write_file", { file_path: "w.txt", content: "w" }, { id: "call_w" })),
    turn.text("Could not write."),
    turn.text("Second task done."),
  ], async ({ root, workspace, env }) => {
    const r = await runCli(
      ["--root", root, "chat", "--workspace", workspace, "--approve", "read-only"],
      { stdin: "write it\ny\n", env },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /Approve this tool call/);
    assert.match(
      r.stdout,
      /^× \[denied\] — approval mode read-only runs only read tools when there is no one to ask$/m,
    );
    await assert.rejects(Deno.stat(`${workspace}/w.txt`), Deno.errors.NotFound);
    const sid = /^Session: (session-\S+)$/m.exec(r.stdout)![1]!;
    const trace = await traceRecords(root, sid);
    const prompts = trace.filter((m) =>
      m.type === "model_msg" && m.payload.type === "text" && m.payload.role === "user"
    ).map((m) => (m.payload as { text: string }).text);
    assert.deepEqual(prompts, ["write it", "y"], "the piped y is the second task, not an answer");
    const out = trace.find((m) => m.type === "model_msg" && m.payload.type === "tool_call_output");
    assert.equal(
      (out!.payload as { output: string }).output,
      "Tool call denied by user. Reason: approval mode read-only runs only read tools when there is no one to ask.",
    );
  });
});

Deno.test({
  name:
    "chat with piped tasks asks approvals on the terminal: both tasks run, and only y/n settle a prompt",
  ignore: !hasTmux,
  async fn() {
    await withChatEnv([
      turn.of(item.toolCall("exec_command", { cmd: "echo one" }, { id: "call_one" })),
      turn.text("Ran one."),
      turn.of(item.toolCall("exec_command", { cmd: "echo two" }, { id: "call_two" })),
      turn.text("Skipped two."),
    ], async ({ root, workspace, env }) => {
      const script = await penguinScript(
        workspace,
        ["--root", root, "chat", "--workspace", workspace, "--approve", "always-ask"],
        { ...env, NO_COLOR: "1" },
        { stdinCommand: "printf 'task1\\ntask2\\n'" },
      );
      const pane = await startPane(script.command);
      try {
        await pane.waitFor(
          /^> task1\n[\s\S]*\? Approve this tool call\? \[Y\/a\/n\] $/m,
          "the prompt",
        );
        await nopeThenYes(pane);
        await pane.waitFor(/^Ran one\.$/m, "the first task's answer");
        await pane.waitFor(
          /^> task2\n[\s\S]*\? Approve this tool call\? \[Y\/a\/n\] $/m,
          "prompt 2",
        );
        await denyWithNote(pane);
        const s = await pane.waitFor(/^\[exited \d+\]$/m, "chat to exit");
        assert.match(s, /^× \[denied\] — the user answered no\nSkipped two\.$/m);
        assert.match(s, /\[exited 0\]/);
        const sid = /^Session: (session-\S+)$/m.exec(s)![1]!;
        const trace = await traceRecords(root, sid);
        const prompts = trace.filter((m) =>
          m.type === "model_msg" && m.payload.type === "text" && m.payload.role === "user"
        ).map((m) => (m.payload as { text: string }).text);
        assert.deepEqual(prompts, ["task1", "task2"]);
        const decisions = trace.filter((m) => m.payload.type === "approval_decision").map((m) =>
          m.payload as { decision: string; reason?: string }
        ).map((d) => [d.decision, d.reason]);
        assert.deepEqual(decisions, [["allow", undefined], ["deny", "the user answered no"]]);
      } finally {
        await pane.close();
        await Deno.remove(script.path).catch(() => {});
      }
    });
  },
});

Deno.test("chat with nothing on stdin exits without a resume command", async () => {
  await withChatEnv([], async ({ root, workspace, env }) => {
    const r = await runCli(["--root", root, "chat", "--workspace", workspace], { stdin: "", env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^penguin chat v\S+\nAgent: default_agent\n/);
    assert.doesNotMatch(r.stdout, /To continue/);
  });
});

Deno.test("chat flag errors are usage errors (exit 2)", async () => {
  const cases: [string[], RegExp][] = [
    [["--provider", "custom"], /--model-id and --provider must be given together/],
    [["--thinking", "huge"], /--thinking must be one of none, low, medium, high, xhigh, max/],
    [["--approve", "sometimes"], /--approve must be one of allow-all/],
    [["--network", "maybe"], /--network must be on or off/],
    [["--max-turns", "many"], /--max-turns must be an integer/],
    [["--sandbox", "none"], /--sandbox must be one of workspace-write, read-only, off/],
    [["--workspace", "/nonexistent/dir"], /chat: the workspace does not exist: \/nonexistent\/dir/],
    [["stray"], /unexpected argument/],
  ];
  for (const [args, want] of cases) {
    const r = await runCli(["chat", ...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, want);
  }
});

Deno.test("chat --resume fails clearly when there is nothing it can resume", async () => {
  await withChatEnv([], async ({ root, workspace, env }) => {
    const r = await runCli(["--root", root, "chat", "--resume", "latest"], {
      stdin: "",
      env,
      cwd: workspace,
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /chat: no session to resume in this workspace \(.*\): give a session id/,
    );
    assert.equal(r.stdout, "");
  });
});

Deno.test("chat applies the workspace's penguin.jsonc: its approval mode and command rules narrow the flags", async () => {
  await withChatEnv([
    turn.of(item.toolCall("write_file", { file_path: "made.txt", content: "x" }, { id: "call_w" })),
    turn.text("Could not write."),
    turn.of(item.toolCall("exec_command", { cmd: "git push origin main" }, { id: "call_p" })),
    turn.text("Push refused."),
  ], async ({ root, workspace, env }) => {
    await Deno.writeTextFile(
      `${workspace}/penguin.jsonc`,
      `{
  // read tools only, and never push
  "approval": "deny-all",
  "command_rules": [{ "name": "no-push", "pattern": "\\\\bgit\\\\s+push\\\\b" }]
}\n`,
    );
    const r = await runCli(["--root", root, "chat", "--workspace", workspace], {
      stdin: "write it\npush it\n",
      env,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /\[penguin\] penguin\.jsonc: /);
    // The file tool was denied by the narrowed approval mode: nothing was written.
    await assert.rejects(Deno.stat(`${workspace}/made.txt`), Deno.errors.NotFound);
    assert.match(r.stdout, /× \[denied\]/);
    assert.match(r.stdout, /× \[forbidden by policy\]/);
  });
});

/** Start `penguin chat` in a tmux pane; returns the pane, the session id and a cleanup. */
async function startChatPane(
  env: ChatEnv,
  extra: string[] = [],
): Promise<{ pane: Awaited<ReturnType<typeof startPane>>; sid: string; done(): Promise<void> }> {
  const script = await penguinScript(
    env.workspace,
    inRoot(env, "chat", ...extra),
    { ...env.env, NO_COLOR: "1" },
  );
  const pane = await startPane(script.command);
  const start = await pane.waitFor(/^Session: session-\S+\n[\s\S]*^>\s*$/m, "the prompt");
  return {
    pane,
    sid: /^Session: (session-\S+)$/m.exec(start)![1]!,
    async done() {
      await pane.close();
      await Deno.remove(script.path).catch(() => {});
    },
  };
}

/** The user texts of a session's trace. */
async function userTexts(root: string, sid: string): Promise<string[]> {
  return (await traceRecords(root, sid)).filter((m) =>
    m.type === "model_msg" && m.payload.type === "text" && m.payload.role === "user"
  ).map((m) => (m.payload as { text: string }).text);
}

Deno.test({
  name:
    "chat in a terminal: Escape interrupts a task and never eats the next key; Ctrl-C keeps the typed text, a second clears it",
  ignore: !hasTmux,
  async fn() {
    await withChatEnv([
      { ...turn.text("Once upon a time there was a very long story"), stall_after: 3 },
      { ...turn.text("Another story that goes on and on and on"), stall_after: 3 },
    ], async (env) => {
      const { pane, sid, done } = await startChatPane(env);
      try {
        await pane.type("story one");
        await pane.keys("Enter");
        await pane.waitFor(/^Once upon/m, "the first answer to stream");
        await pane.keys("Escape");
        await pane.waitFor(/^\[current conversation interrupted\]\n>\s*$/m, "Escape to interrupt");
        // A key typed right after Escape (a separate read) is kept.
        await pane.type("hello");
        await pane.waitFor(/^\[current conversation interrupted\]\n> hello\s*$/m, "hello, whole");
        await pane.keys("C-u");
        // Escape and a key in one read (what Alt-x sends) is Escape, then the key.
        await pane.bytes("\x1bsteer me");
        await pane.waitFor(/^\[current conversation interrupted\]\n> steer me\s*$/m, "steer me");
        await pane.keys("C-u");

        await pane.type("story two");
        await pane.keys("Enter");
        await pane.waitFor(/^Another story/m, "the second answer to stream");
        await pane.type("half typed");
        await pane.waitFor(/^> half typed\s*$/m, "the text typed during the task");
        await pane.keys("C-c");
        let s = await pane.waitFor(
          /^\[current conversation interrupted\]\n> half typed\s*$/m,
          "the interruption, with the text kept",
        );
        assert.equal(s.match(/\[current conversation interrupted\]/g)?.length, 2);
        await pane.keys("C-c");
        s = await pane.waitFor(/^\[current conversation interrupted\]\n>\s*$/m, "the text cleared");
        assert.doesNotMatch(s, /Exit penguin\?/);
        await pane.type("/exit");
        await pane.keys("Enter");
        await pane.waitFor(/^\[exited 0\]$/m, "chat to exit");
        assert.deepEqual(await userTexts(env.root, sid), ["story one", "story two"]);
        const aborts = (await traceRecords(env.root, sid)).filter((m) =>
          m.type === "event_msg" && m.payload.type === "abort"
        );
        assert.equal(aborts.length, 2);
      } finally {
        await done();
      }
    });
  },
});

Deno.test({
  name:
    "chat in a terminal: multi-line input, --thinking none, /clear and /model print the ids, and the history survives a restart",
  ignore: !hasTmux,
  async fn() {
    await withChatEnv([
      turn.text("Three lines received."),
      turn.text("Fresh start."),
      turn.text("Hello from the other model."),
    ], async (env) => {
      const other = await runCli(
        modelAddArgs(
          env.root,
          "custom",
          "other-model",
          "--base-url",
          env.server.baseUrl("openai-chat"),
          "--api-key",
          "sk-test",
          "--client-type",
          "openai-chat",
        ),
      );
      assert.equal(other.code, 0, other.stderr);
      const { pane, sid, done } = await startChatPane(env, ["--thinking", "none"]);
      let clearedSid = "";
      let switchedSid = "";
      try {
        await pane.type("first line");
        await pane.keys("C-j");
        await pane.type("second line");
        await pane.keys("M-Enter");
        await pane.type("third \\");
        await pane.keys("Enter");
        await pane.type("fourth");
        await pane.waitFor(
          /^> first line\n… second line\n… third \n… fourth\s*$/m,
          "four lines in the input",
        );
        await pane.keys("Enter");
        await pane.waitFor(/^Three lines received\.\n\[stats\] .*\n>\s*$/m, "the answer");
        assert.deepEqual(await userTexts(env.root, sid), [
          "first line\nsecond line\nthird \nfourth",
        ]);

        await pane.type("/clear");
        await pane.keys("Enter");
        let s = await pane.waitFor(/^\[clear\] new session (session-\S+) .*\n>\s*$/m, "/clear");
        clearedSid = /^\[clear\] new session (session-\S+) /m.exec(s)![1]!;
        assert.match(
          s,
          new RegExp(
            `^\\[clear\\] new session ${clearedSid} \\(the previous one, ${sid}, is kept and resumable\\)$`,
            "m",
          ),
        );
        assert.notEqual(clearedSid, sid);
        await pane.type("again");
        await pane.keys("Enter");
        await pane.waitFor(/^Fresh start\.\n\[stats\] .*\n>\s*$/m, "the answer in the new session");

        await pane.type("/model");
        await pane.keys("Enter");
        s = await pane.waitFor(
          /^\[model\] configured models.*\n(?: {2}.*\n)+>\s*$/m,
          "/model alone",
        );
        assert.match(s, /^ {2}custom scripted-model {2}\(current\)$/m);
        assert.match(s, /^ {2}custom other-model$/m);
        await pane.type("/model custom other-model");
        await pane.keys("Enter");
        s = await pane.waitFor(
          /^\[model\] other-model \(custom\): session (session-\S+) goes on .*\n>\s*$/m,
          "/model",
        );
        switchedSid = /^\[model\] other-model \(custom\): session (session-\S+) /m.exec(s)![1]!;
        assert.equal(switchedSid, clearedSid, "the session goes on");
        await pane.type("who are you");
        await pane.keys("Enter");
        await pane.waitFor(/^Hello from the other model\.\n\[stats\] .*\n>\s*$/m, "the answer");
        await pane.type("/exit");
        await pane.keys("Enter");
        await pane.waitFor(/^\[exited 0\]$/m, "chat to exit");
      } finally {
        await done();
      }
      // The session goes on: its conversation goes to the other model, and the switch is recorded.
      assert.deepEqual(await userTexts(env.root, switchedSid), ["again", "who are you"]);
      const last = env.server.requests[2]!;
      assert.equal(last.model, "other-model");
      assert.match(JSON.stringify(last.body), /Fresh start/, "the conversation is carried over");
      const records = await traceRecords(env.root, switchedSid);
      const switched = records.filter((m) => m.payload.type === "model_switched");
      assert.equal(switched.length, 1);
      assert.deepEqual(
        [switched[0]!.payload.provider, switched[0]!.payload.model_id],
        ["custom", "other-model"],
      );

      // The history is the agent's, kept private, and comes back in the next chat.
      const path = `${env.root}/default_project/agents/default_agent/agent_state/chat_history`;
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
      const saved = (await Deno.readTextFile(path)).trim().split("\n").map((l) => JSON.parse(l));
      assert.deepEqual(saved, [
        "first line\nsecond line\nthird \nfourth",
        "/clear",
        "again",
        "/model",
        "/model custom other-model",
        "who are you",
        "/exit",
      ]);
      const again = await startChatPane(env);
      try {
        await again.pane.keys("Up");
        await again.pane.waitFor(/^>\s*\/exit\s*$/m, "the last message recalled");
        await again.pane.keys("Up", "Up");
        await again.pane.waitFor(/^> \/model custom other-model\s*$/m, "an older message");
        await again.pane.keys("Down", "Down", "Down");
        await again.pane.waitFor(/^Session: session-\S+\n[\s\S]*^>\s*$/m, "the empty draft");
      } finally {
        await again.done();
      }
    });
  },
});
