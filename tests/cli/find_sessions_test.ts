// Finding sessions: `--resume latest` means the latest session of the current
// directory's workspace (none there: refused, nothing written), and
// `sessions list` shows the recent user sessions, fitted to the width.
import assert from "node:assert/strict";
import { join } from "node:path";
import { turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import type { Sandbox } from "../agent/_support.ts";

const sidOf = (stderr: string) => /^Session: (session-\S+)$/m.exec(stderr)?.[1];

async function runIn(sb: Sandbox, dir: string, ...args: string[]) {
  return await runCli(["--root", sb.root, "run", ...args], { cwd: dir });
}

async function twoWorkspaces(sb: Sandbox): Promise<{ a: string; b: string; c: string }> {
  const base = join(sb.workspace, "..");
  const b = join(base, "ws-b");
  const c = join(base, "ws-c");
  await Deno.mkdir(b);
  await Deno.mkdir(c);
  return { a: sb.workspace, b, c };
}

Deno.test("run --resume latest resumes this workspace's latest session; from a directory with none it refuses and writes nothing", async () => {
  await withModelRoot({ handler: () => turn.text("ok"), maxRequests: 10 }, async (sb) => {
    const { a, b, c } = await twoWorkspaces(sb);
    const inA = await runIn(sb, a, "-m", "task in A");
    assert.equal(inA.code, 0, inA.stderr);
    const inB = await runIn(sb, b, "-m", "task in B");
    assert.equal(inB.code, 0, inB.stderr);
    // B's session is the newest, but from A "latest" is A's.
    const again = await runIn(sb, a, "--resume", "latest", "-m", "again");
    assert.equal(again.code, 0, again.stderr);
    assert.equal(sidOf(again.stderr), sidOf(inA.stderr));
    const before =
      (await runCli(["--root", sb.root, "sessions", "list", "--all", "--json"])).stdout;
    const none = await runIn(sb, c, "--resume", "latest", "-m", "again");
    assert.equal(none.code, 1, none.stderr);
    assert.match(
      none.stderr,
      /^penguin: run: no session to resume in this workspace \(.*ws-c\): give a session id \(penguin sessions list --all lists every workspace's\)/,
    );
    const after = (await runCli(["--root", sb.root, "sessions", "list", "--all", "--json"])).stdout;
    assert.equal(after, before, "nothing was written");
  }, { visible: true });
});

Deno.test("sessions list: 20 most recent, 0-turn and subagent sessions hidden unless --all; --limit, --workspace; fits COLUMNS", async () => {
  let n = 0;
  const handler = () => (n++ === 0 ? turn.error(400) : turn.text("ok"));
  await withModelRoot({ handler, maxRequests: 40 }, async (sb) => {
    const { a, b } = await twoWorkspaces(sb);
    // A failed first run: a session with no completed turn.
    const failed = await runIn(sb, a, "-m", "fails");
    assert.notEqual(failed.code, 0);
    for (let i = 0; i < 21; i++) {
      const r = await runIn(
        sb,
        i === 20 ? b : a,
        "-m",
        `prompt number ${i} ${"words ".repeat(20)}`,
      );
      assert.equal(r.code, 0, r.stderr);
    }
    const list = (...args: string[]) =>
      runCli(["--root", sb.root, "sessions", "list", ...args], { env: { COLUMNS: "100" } });
    const def = await list();
    assert.equal(def.code, 0, def.stderr);
    const lines = def.stdout.trimEnd().split("\n");
    // Header, 20 rows, the count, the note of what is not shown.
    assert.equal(lines.length, 23, def.stdout);
    for (const l of lines) assert.ok(l.length < 100, `fits 100 columns: ${l.length}: ${l}`);
    assert.match(lines[0]!, /^ID\s+AGE\s+MODEL\s+TURNS\s+TOKENS\s+FIRST PROMPT$/);
    assert.match(lines[1]!, /prompt number 20 words/);
    assert.ok(lines[1]!.endsWith("…"), lines[1]);
    assert.equal(lines[21], "20 session(s)");
    assert.equal(
      lines[22],
      "Not shown: 1 older (--limit <n>); 1 with no turn or of a subagent (--all).",
    );
    assert.ok(!def.stdout.includes("fails"), def.stdout);

    const all = await list("--all", "--json");
    assert.equal(JSON.parse(all.stdout).length, 22);
    const limited = await list("--limit", "3", "--json");
    assert.equal(JSON.parse(limited.stdout).length, 3);
    const onlyB = await list("--workspace", b, "--json");
    const rowsB = JSON.parse(onlyB.stdout) as { first_prompt: string }[];
    assert.equal(rowsB.length, 1);
    assert.match(rowsB[0]!.first_prompt, /^prompt number 20 /);
    // Wide enough: every column, the prompt cut to the room left.
    const wide = await runCli(["--root", sb.root, "sessions", "list", "--limit", "1"], {
      env: { COLUMNS: "220" },
    });
    assert.match(wide.stdout, /^ID\s+CREATED\s+LAST ACTIVITY\s+MODEL\s+WORKSPACE\s+TURNS/);
    const bad = await list("--limit", "0");
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--limit must be a positive integer/);
  }, { visible: true });
});
