// `penguin chat --resume` without an id: a picker of this workspace's
// sessions (arrow keys, type to filter, --all for every workspace) under a
// real pseudo-terminal; without a terminal, one line and exit 2.
import assert from "node:assert/strict";
import { join } from "node:path";
import { turn } from "../support/model_server.ts";
import { denoDir, runCli, testHome } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { hasTmux, type Pane, penguinScript, startPane } from "../support/tmux.ts";
import type { Sandbox } from "../agent/_support.ts";
import { assertNoPieceOf, setVault } from "../support/secrets.ts";

const sidOf = (stderr: string) => /^Session: (session-\S+)$/m.exec(stderr)?.[1];

async function runIn(sb: Sandbox, dir: string, prompt: string): Promise<string> {
  const r = await runCli(["--root", sb.root, "run", "-m", prompt], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  return sidOf(r.stderr)!;
}

/** Three sessions in the sandbox's workspace (oldest first) and one in another directory. */
async function sessions(sb: Sandbox) {
  const other = join(sb.workspace, "..", "ws-other");
  await Deno.mkdir(other);
  const alpha = await runIn(sb, sb.workspace, "alpha: count the files");
  const beta = await runIn(sb, sb.workspace, "beta: read the readme");
  const gamma = await runIn(sb, sb.workspace, "gamma: fix the build");
  const delta = await runIn(sb, other, "delta: elsewhere entirely");
  return { alpha, beta, gamma, delta, other };
}

/** The pane running `penguin --root <root> chat --resume <extra…>` from `cwd`. */
async function pickerPane(sb: Sandbox, cwd: string, extra: string[] = []) {
  const env = { HOME: testHome(), DENO_DIR: denoDir(), NO_COLOR: "1" };
  const script = await penguinScript(
    sb.workspace,
    ["--root", sb.root, "chat", "--resume", ...extra],
    env,
    { cwd },
  );
  const pane = await startPane(script.command);
  return {
    pane,
    async done() {
      await pane.close();
      await Deno.remove(script.path);
    },
  };
}

const HANDLER = () => turn.text("ok");

type Sessions = Awaited<ReturnType<typeof sessions>>;

/**
 * A tmux test of the picker: `body` gets the pane of `chat --resume <extra…>` started from the
 * directory `cwd` names (the workspace by default), in a root holding {@linkcode sessions}.
 */
function pickerTest(
  name: string,
  body: (pane: Pane, sb: Sandbox, s: Sessions) => Promise<void>,
  opts: { extra?: string[]; cwd?: (sb: Sandbox, s: Sessions) => Promise<string> } = {},
): Deno.TestDefinition {
  return {
    name,
    ignore: !hasTmux,
    async fn() {
      await withModelRoot({ handler: HANDLER, maxRequests: 20 }, async (sb) => {
        const s = await sessions(sb);
        const cwd = opts.cwd ? await opts.cwd(sb, s) : sb.workspace;
        const { pane, done } = await pickerPane(sb, cwd, opts.extra);
        try {
          await body(pane, sb, s);
        } finally {
          await done();
        }
      }, { visible: true });
    },
  };
}

Deno.test(pickerTest(
  "chat --resume without an id: a picker of this workspace's sessions; arrows, filter, Enter resumes",
  async (pane, _sb, s) => {
    let screen = await pane.waitFor(/session\(s\)\s*$/m, "the picker");
    // Newest first, this workspace only; each row: age, turns, model, first prompt.
    assert.match(
      screen,
      /^Resume a session of .*\/ws:\n↑\/↓ choose · type to filter · Enter resumes · Esc cancels\nFilter: \n> +\S+ +1 turn\(s\) +m +gamma: fix the build\n +\S+ +1 turn\(s\) +m +beta: read the readme\n +\S+ +1 turn\(s\) +m +alpha: count the files\n +3 of 3 session\(s\)$/m,
    );
    assert.doesNotMatch(screen, /delta/);
    console.log(`--- the picker (100 columns) ---\n${screen.trimEnd()}\n---`);
    await pane.keys("Down");
    screen = await pane.waitFor(/^> .*beta: read the readme *$/m, "the selection to move down");
    assert.match(screen, /^ +\S+ +1 turn\(s\) +m +gamma: fix the build *$/m);
    // Typing filters (and selects the first match); Backspace widens again.
    await pane.type("alphx");
    await pane.waitFor(/^Filter: alphx *\n {2}\(no session matches "alphx"\) *$/m, "no match");
    await pane.keys("BSpace");
    screen = await pane.waitFor(
      /^Filter: alph *\n> .*alpha: count the files *\n +1 of 3 session\(s\) *$/m,
      "the filtered list",
    );
    await pane.keys("Enter");
    screen = await pane.waitFor(/^\[resumed\] \S+ · \d+ message\(s\)/m, "the resumed chat");
    assert.match(screen, new RegExp(`^Session: ${s.alpha}$`, "m"));
    assert.match(screen, new RegExp(`^\\[resumed\\] ${s.alpha} · 2 message\\(s\\)`, "m"));
    // The picker was erased: its rows are not left above the chat.
    assert.doesNotMatch(screen, /session\(s\) *$/m);
    await pane.waitFor(/^>\s*$/m, "the chat prompt");
    await pane.type("/exit");
    await pane.keys("Enter");
    screen = await pane.waitFor(/^\[exited \d+\]$/m, "chat to exit");
    assert.match(screen, /^\[exited 0\]$/m);
  },
));

Deno.test(pickerTest(
  "chat --resume --all picks from every workspace; Escape cancels and resumes nothing",
  async (pane, sb, s) => {
    const screen = await pane.waitFor(/session\(s\)\s*$/m, "the picker");
    assert.match(screen, /^Resume a session \(every workspace\):$/m);
    assert.match(screen, /^> +\S+ +1 turn\(s\) +m +\S*ws-other +delta: elsewhere entirely$/m);
    assert.match(screen, /^ +4 of 4 session\(s\)$/m);
    const before = await listed(sb);
    await pane.keys("Escape");
    const end = await pane.waitFor(/^\[exited \d+\]$/m, "chat to end");
    assert.match(end, /^penguin: chat: no session picked; nothing resumed\n\[exited 1\]$/m);
    assert.deepEqual(await listed(sb), before, "nothing was written");
    assert.ok(s.delta);
  },
  { extra: ["--all"] },
));

async function listed(sb: Sandbox): Promise<string> {
  const r = await runCli(["--root", sb.root, "sessions", "list", "--all", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

Deno.test(pickerTest(
  "chat --resume without an id in a directory with no session refuses and names --all",
  async (pane) => {
    const end = await pane.waitFor(/^\[exited \d+\]$/m, "chat to end");
    assert.match(
      end,
      /^penguin: chat: no session to resume in this workspace \(.*ws-empty\): give a session id, or --all to pick from every workspace's sessions\n\[exited 1\]$/m,
    );
  },
  {
    cwd: async (_sb, s) => {
      const empty = join(s.other, "..", "ws-empty");
      await Deno.mkdir(empty);
      return empty;
    },
  },
));

Deno.test("chat --resume without an id and without a terminal: one line naming an id, exit 2, nothing written", async () => {
  await withModelRoot({ handler: HANDLER, maxRequests: 20 }, async (sb) => {
    await runIn(sb, sb.workspace, "alpha: count the files");
    const before = await listed(sb);
    const r = await runCli(["--root", sb.root, "chat", "--resume"], {
      cwd: sb.workspace,
      stdin: "hello\n",
    });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(
      r.stderr,
      "penguin: chat: --resume without an id picks from a list, which needs a terminal: " +
        "give a session id (penguin sessions list lists them) or --resume latest\n",
    );
    assert.equal(r.stdout, "");
    assert.equal(await listed(sb), before);
    const all = await runCli(["--root", sb.root, "chat", "--all"], { cwd: sb.workspace });
    assert.equal(all.code, 2);
    assert.match(all.stderr, /^penguin: chat: --all goes with --resume and no id/);
  }, { visible: true });
});

Deno.test({
  name: "/resume in a chat picks another session of the workspace and goes on in it",
  ignore: !hasTmux,
  async fn() {
    await withModelRoot({ handler: HANDLER, maxRequests: 20 }, async (sb) => {
      const s = await sessions(sb);
      const env = { HOME: testHome(), DENO_DIR: denoDir(), NO_COLOR: "1" };
      const script = await penguinScript(sb.workspace, ["--root", sb.root, "chat"], env, {
        cwd: sb.workspace,
      });
      const pane = await startPane(script.command);
      try {
        await pane.waitFor(/^>\s*$/m, "the chat prompt");
        await pane.type("/resume");
        await pane.keys("Enter");
        let screen = await pane.waitFor(/3 of 3 session\(s\) *$/m, "the picker");
        assert.match(screen, /^> +\S+ +1 turn\(s\) +m +gamma: fix the build *$/m);
        await pane.type("beta");
        await pane.waitFor(/^> .*beta: read the readme *\n +1 of 3 session\(s\) *$/m, "the filter");
        await pane.keys("Enter");
        screen = await pane.waitFor(/^\[resumed\] .*is kept\)$/m, "the resumed session");
        assert.match(
          screen,
          new RegExp(`^\\[resumed\\] ${s.beta} · 2 message\\(s\\) in the current context`, "m"),
        );
        await pane.waitFor(/^>\s*$/m, "the prompt again");
        await pane.type("/exit");
        await pane.keys("Enter");
        screen = await pane.waitFor(/^\[exited \d+\]$/m, "chat to exit");
        assert.match(
          screen,
          new RegExp(`^To continue this conversation: penguin chat --resume ${s.beta} `, "m"),
        );
      } finally {
        await pane.close();
        await Deno.remove(script.path);
      }
    }, { visible: true });
  },
});

Deno.test("/resume <id> in a piped chat continues that session; /resume alone says to give an id", async () => {
  await withModelRoot({ handler: HANDLER, maxRequests: 20 }, async (sb, server) => {
    const s = await sessions(sb);
    const r = await runCli(["--root", sb.root, "chat"], {
      cwd: sb.workspace,
      stdin: `/resume\n/resume ${s.alpha}\nand then?\n`,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^\[error\] \/resume without an id needs a terminal to pick on: \/resume <session>$/m,
    );
    assert.match(r.stdout, new RegExp(`^\\[resumed\\] ${s.alpha} · 2 message\\(s\\)`, "m"));
    // The task went to alpha's conversation.
    const last = JSON.stringify(server.requests.at(-1)!.body);
    assert.ok(last.includes("alpha: count the files") && last.includes("and then?"), last);
    assert.match(r.stdout, new RegExp(`penguin chat --resume ${s.alpha} `));
  }, { visible: true });
});

Deno.test({
  name: "the resume picker shows titles with the secrets known now masked, as sessions list does",
  ignore: !hasTmux,
  async fn() {
    // Attack pass final13c-secimp row 63: a prompt held W before W went into the vault.
    const W = "Wm3Tn8Rk5Pq2Zx7Bv4Lc9Hd6Fy1Gs0J";
    await withModelRoot({ handler: HANDLER, maxRequests: 5 }, async (sb) => {
      await runIn(sb, sb.workspace, `T1:${W}`);
      await setVault(sb.root, "LATE_W", W);
      const { pane, done } = await pickerPane(sb, sb.workspace);
      try {
        const screen = await pane.waitFor(/session\(s\)\s*$/m, "the picker");
        assert.match(screen, /T1:\[redacted/);
        assertNoPieceOf(screen, [W], "the picker");
        await pane.keys("Escape");
      } finally {
        await done();
      }
    }, { visible: true });
  },
});
