import assert from "node:assert/strict";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { penguinArgv, REPO, runCli } from "../support/cli.ts";
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

Deno.test("a trailing backslash continues the message on a new line", () => {
  const e = createLineEditor();
  assert.deepEqual(e.feed("first \\\r"), []);
  assert.equal(e.text(), "first \n");
  assert.deepEqual(e.feed("second\r"), [{ type: "submit", text: "first \nsecond" }]);
});

Deno.test("bracketed paste keeps newlines as one message, even split across chunks", () => {
  const e = createLineEditor();
  assert.deepEqual(e.feed("\x1b[200~line one\r\nline"), []);
  assert.deepEqual(e.feed(" two\x1b[20"), []);
  assert.deepEqual(e.feed("1~"), []);
  assert.equal(e.text(), "line one\nline two");
  assert.deepEqual(e.feed("\r"), [{ type: "submit", text: "line one\nline two" }]);
});

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

/** Deno's cache directory, kept when a test gives the CLI a fresh HOME. */
async function denoDir(): Promise<string> {
  const fromEnv = Deno.env.get("DENO_DIR");
  if (fromEnv) return fromEnv;
  const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" })
    .output();
  return JSON.parse(new TextDecoder().decode(out.stdout)).denoDir;
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
  const env = { HOME: home, DENO_DIR: await denoDir() };
  try {
    const add = await runCli([
      "--root",
      root,
      "config",
      "model",
      "add",
      "--provider",
      "custom",
      "--model-id",
      "scripted-model",
      "--base-url",
      server.baseUrl("openai-chat"),
      "--api-key",
      "sk-test",
      "--client-type",
      "openai-chat",
      "--set-default",
    ]);
    assert.equal(add.code, 0, add.stderr);
    await fn({ root, workspace, server, env });
  } finally {
    await server.close();
    await Deno.remove(home, { recursive: true });
    await Deno.remove(root, { recursive: true });
    await Deno.remove(workspace, { recursive: true });
  }
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
      /^> say something\nFirst answer\.\n\[stats\] context 120 \(\+120\) · tokens 120 \(\+120\) · \S+ \(\+\S+\)\n> now run a command\n\[tool-l_0\] exec_command <- \$ echo hi from the tool\n✓ \[approved\]\n\[tool-l_0\] exec_command -> hi from the tool\nSecond answer\.\n\[stats\] context 120 \(\+0\) · tokens 360 \(\+240\)/,
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

const TMUX = "/usr/bin/tmux";
const hasTmux = (() => {
  try {
    return Deno.statSync(TMUX).isFile;
  } catch {
    return false;
  }
})();

/** A detached tmux server of its own, with one pane running `command`. */
async function startPane(command: string): Promise<{
  keys(...keys: string[]): Promise<void>;
  type(text: string): Promise<void>;
  paste(text: string): Promise<void>;
  screen(): Promise<string>;
  waitFor(pattern: RegExp, what: string, timeoutMs?: number): Promise<string>;
  close(): Promise<void>;
}> {
  const socket = `penguin-chat-test-${crypto.randomUUID().slice(0, 8)}`;
  const tmux = async (...args: string[]) => {
    const out = await new Deno.Command(TMUX, { args: ["-L", socket, ...args], stdout: "piped" })
      .output();
    return new TextDecoder().decode(out.stdout);
  };
  await tmux("new-session", "-d", "-s", "chat", "-x", "120", "-y", "40", command);
  const screen = () => tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "chat");
  return {
    keys: async (...keys) => void await tmux("send-keys", "-t", "chat", ...keys),
    type: async (text) => void await tmux("send-keys", "-t", "chat", "-l", text),
    // -p: bracketed, since chat asks the terminal for bracketed paste.
    paste: async (text) => {
      await tmux("set-buffer", "-b", "penguin", text);
      await tmux("paste-buffer", "-p", "-d", "-b", "penguin", "-t", "chat");
    },
    screen,
    async waitFor(pattern, what, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      let last = "";
      while (Date.now() < deadline) {
        last = await screen();
        if (pattern.test(last)) return last;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`timed out waiting for ${what}; the screen shows:\n${last}`);
    },
    close: async () => void await tmux("kill-server"),
  };
}

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

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
      const script = `${workspace}/../penguin-chat-${crypto.randomUUID().slice(0, 8)}.sh`;
      const argv = [Deno.execPath(), ...penguinArgv(), "--root", root, "chat"];
      argv.push("--workspace", workspace, "--approve", "always-ask");
      await Deno.writeTextFile(
        script,
        `export HOME=${shellQuote(env.HOME!)} DENO_DIR=${shellQuote(env.DENO_DIR!)}\n` +
          `cd ${shellQuote(REPO)}\n${argv.map(shellQuote).join(" ")}\n` +
          `echo "[exited $?]"\nsleep 120\n`,
      );
      const pane = await startPane(`bash ${shellQuote(script)}`);
      try {
        const start = await pane.waitFor(/^Session: session-\S+\n[\s\S]*^>\s*$/m, "the prompt");
        const sid = /^Session: (session-\S+)$/m.exec(start)![1]!;

        await pane.type("list the files");
        await pane.keys("Enter");
        await pane.waitFor(/\? Approve this tool call\? \[Y\/n\]\s*$/m, "the approval prompt");
        await pane.type("y");
        await pane.keys("Enter");
        let s = await pane.waitFor(/^\[stats\] /m, "the first task's stats line");
        assert.match(
          s,
          /^> list the files\nThe user wants the files\.\n\[tool-l_1\] exec_command <- \$ printf 'alpha\\nbeta\\n'\n\? Approve this tool call\? \[Y\/n\] y\n✓ \[approved\]\n\[tool-l_1\] exec_command -> alpha\n\[tool-l_1\] exec_command -> beta\nThe tool said alpha and beta\.\n\[stats\] context 120 \(\+120\) · tokens 240 \(\+240\) · /m,
        );

        await pane.waitFor(/^\[stats\] .*\n>\s*$/m, "the prompt after the first task");
        await pane.type("tell me a long story");
        await pane.keys("Enter");
        await pane.waitFor(/^Thinking about a/m, "the stalled answer to start streaming");
        await pane.type("and make it short");
        await pane.keys("Enter");
        await pane.waitFor(
          /^» steering queued \(delivered with the next turn\): and make it short$/m,
          "the steering notice",
        );
        await pane.keys("C-c");
        s = await pane.waitFor(/^\[current conversation interrupted\]\n>\s*$/m, "the interruption");
        assert.match(s, /^\[abort\]: aborted by user\n\[current conversation interrupted\]$/m);

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
        await Deno.remove(script).catch(() => {});
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
      const script = `${workspace}/../penguin-chat-${crypto.randomUUID().slice(0, 8)}.sh`;
      const argv = [Deno.execPath(), ...penguinArgv(), "--root", root, "chat"];
      argv.push("--workspace", workspace);
      await Deno.writeTextFile(
        script,
        `export HOME=${shellQuote(env.HOME!)} DENO_DIR=${shellQuote(env.DENO_DIR!)} NO_COLOR=1\n` +
          `cd ${shellQuote(REPO)}\n${argv.map(shellQuote).join(" ")}\n` +
          `echo "[exited $?]"\nsleep 120\n`,
      );
      const pane = await startPane(`bash ${shellQuote(script)}`);
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
        await Deno.remove(script).catch(() => {});
      }
    });
  },
});

Deno.test("chat with piped stdin asks approvals on the next line, and end of input denies", async () => {
  await withChatEnv([
    turn.of(item.toolCall("exec_command", { cmd: "echo one" }, { id: "call_one" })),
    turn.text("Denied, fine."),
    turn.of(item.toolCall("exec_command", { cmd: "echo two" }, { id: "call_two" })),
    turn.text("Denied again."),
  ], async ({ root, workspace, env }) => {
    const r = await runCli(
      ["--root", root, "chat", "--workspace", workspace, "--approve", "always-ask"],
      { stdin: "first\nn\nsecond\n", env },
    );
    assert.equal(r.code, 0, r.stderr);
    const body = r.stdout.slice(r.stdout.indexOf("> first"));
    assert.match(
      body,
      /^> first\n\[tool-one\] exec_command <- \$ echo one\n\? Approve this tool call\? \[Y\/n\] n\n× \[denied\]\nDenied, fine\.\n\[stats\] [^\n]*\n> second\n\[tool-two\] exec_command <- \$ echo two\n\? Approve this tool call\? \[Y\/n\] \n× \[denied\]\nDenied again\.\n/,
    );
  });
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
    [
      ["--resume", "--provider", "custom", "--model-id", "m"],
      /--resume continues a session with its recorded model/,
    ],
    [["--thinking", "none"], /--thinking must be one of low, medium, high, xhigh, max/],
    [["--approve", "sometimes"], /--approve must be one of allow-all/],
    [["--network", "maybe"], /--network must be on or off/],
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
    const r = await runCli(["--root", root, "chat", "--resume"], {
      stdin: "",
      env,
      cwd: workspace,
    });
    // Until the agent layer offers resume this is a usage error; afterwards,
    // with no session recorded, it is "No session to resume".
    assert.ok(r.code === 2 || r.code === 1, r.stderr);
    assert.match(
      r.stderr,
      r.code === 2
        ? /--resume is not available yet/
        : /No session to resume for agent default_agent/,
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
