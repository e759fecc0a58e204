// The first resume of an imported session (a penguin trace, or a Codex, Claude Code or pi
// session) works in the current directory, or the one named with --workspace, and says so on
// stderr; it records the placement (a workspace_moved event), so later resumes, `run` or `chat`,
// from any directory, stay there. Never the directory the imported file recorded.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { item, turn } from "../support/model_server.ts";
import { type Sandbox, withModelRoot } from "../support/roots.ts";
import { TEST_MODEL } from "./_import_args.ts";

const PEERS = "/work/shared/fixtures/peer-sessions";
const PENGUIN = "/work/shared/fixtures/penguin-traces/02-tool-calls.jsonl";

interface Scenario {
  harness: string;
  files: Array<{ path: string; role: string }>;
}
const MANIFEST: Scenario[] = JSON.parse(await Deno.readTextFile(join(PEERS, "manifest.json")));
/** One session file of each foreign format. */
const FOREIGN = ["codex", "claude", "pi"].map((h) => {
  const sc = MANIFEST.find((m) => m.harness === h)!;
  return { name: h, file: join(PEERS, sc.files.find((f) => f.role === "session")!.path) };
});

/** The model answers each resume with one command that records where it ran. */
const whereTurns = (n: number) =>
  Array.from({ length: n }, (_, i) => [
    turn.of(item.toolCall("exec_command", { cmd: "pwd >> where.txt" }, { id: `w${i}` })),
    turn.text("noted"),
  ]).flat();

/** A fresh directory `name` under the sandbox's base. */
async function dir(sb: Sandbox, name: string): Promise<string> {
  const path = join(sb.base, name);
  await Deno.mkdir(path);
  return await Deno.realPath(path);
}

/** The penguin fixture with its session_meta's workspace set to `recorded`, in a new directory. */
async function penguinTrace(sb: Sandbox, recorded: string): Promise<string> {
  const text = await Deno.readTextFile(PENGUIN);
  const nl = text.indexOf("\n");
  const meta = JSON.parse(text.slice(0, nl));
  meta.payload.workspace = recorded;
  const src = await Deno.makeTempDir({ dir: sb.base, prefix: "traces-" });
  const path = join(src, `${meta.payload.session_id}_001.jsonl`);
  await Deno.writeTextFile(path, JSON.stringify(meta) + text.slice(nl));
  return path;
}

/** Import `file` from the sandbox's workspace; the new session's id and trace file. */
async function importFrom(sb: Sandbox, file: string): Promise<{ id: string; path: string }> {
  const imp = await runCli(["--root", sb.root, "sessions", "import", "--json", file], {
    cwd: sb.workspace,
  });
  assert.equal(imp.code, 0, imp.stderr);
  const report = JSON.parse(imp.stdout) as {
    imported: { session_id: string; files: { path: string }[] }[];
    foreign?: { session_id: string; path: string }[];
  };
  const f = report.foreign?.[0];
  if (f) return { id: f.session_id, path: f.path };
  const p = report.imported[0]!;
  return { id: p.session_id, path: p.files[0]!.path };
}

/** The `workspace_moved` payloads of a trace file. */
async function moves(path: string): Promise<Record<string, unknown>[]> {
  return (await Deno.readTextFile(path)).trim().split("\n").map((l) => JSON.parse(l))
    .filter((r) => r.type === "event_msg" && r.payload.type === "workspace_moved")
    .map((r) => r.payload);
}

for (const format of [{ name: "penguin", file: "" }, ...FOREIGN]) {
  Deno.test(`an imported ${format.name} session: the first resume works in the current directory (noted), later ones stay there`, async () => {
    await withModelRoot({ turns: whereTurns(3) }, async (sb) => {
      const recorded = await dir(sb, "recorded-home");
      const file = format.file || await penguinTrace(sb, recorded);
      const { id, path } = await importFrom(sb, file);
      const first = await dir(sb, "first");
      const third = await dir(sb, "third");
      const cli = (args: string[], cwd: string, stdin?: string) =>
        runCli(["--root", sb.root, ...args], { cwd, ...(stdin ? { stdin } : {}) });

      // The first resume, from another directory: it works there, and says so.
      const run = await cli(["run", "--resume", id, ...TEST_MODEL, "-m", "where are you?"], first);
      assert.equal(run.code, 0, run.stderr);
      assert.match(
        run.stderr,
        new RegExp(
          `\\[penguin\\] resuming the imported session in ${first} \\(recorded in "[^"\\n]+"\\); ` +
            `--workspace chooses another\\n`,
        ),
      );
      if (format.name === "penguin") {
        assert.ok(run.stderr.includes(`(recorded in "${recorded}")`), run.stderr);
      }
      assert.equal(await Deno.readTextFile(join(first, "where.txt")), `${first}\n`);
      const [moved] = await moves(path);
      assert.deepEqual(moved, {
        type: "workspace_moved",
        from: sb.workspace,
        to: first,
        reason: "imported",
      });

      // Later resumes, run and chat, from a third directory: they stay where the first one worked.
      const chat = await cli(["chat", "--resume", id, ...TEST_MODEL], third, "and now?\n");
      assert.equal(chat.code, 0, chat.stderr);
      assert.ok(!chat.stderr.includes("resuming the imported session"), chat.stderr);
      const again = await cli(["run", "--resume", id, ...TEST_MODEL, "-m", "and now?"], third);
      assert.equal(again.code, 0, again.stderr);
      assert.ok(!again.stderr.includes("resuming the imported session"), again.stderr);
      assert.equal(
        await Deno.readTextFile(join(first, "where.txt")),
        `${first}\n${first}\n${first}\n`,
      );
      for (const d of [third, sb.workspace, recorded]) {
        assert.ok(!(await Deno.readDir(d)[Symbol.asyncIterator]().next()).value, `${d} is empty`);
      }
      assert.equal((await moves(path)).length, 1, "the placement is recorded once");
    });
  });
}

Deno.test("the first resume of an imported session, by chat, in the directory --workspace names", async () => {
  await withModelRoot({ turns: whereTurns(2) }, async (sb) => {
    const { id, path } = await importFrom(sb, FOREIGN[0]!.file);
    const here = await dir(sb, "here");
    const named = await dir(sb, "named");
    const cli = (args: string[], stdin?: string) =>
      runCli(["--root", sb.root, ...args], { cwd: here, ...(stdin ? { stdin } : {}) });

    const chat = await cli(["chat", "--resume", id, "--workspace", named, ...TEST_MODEL], "go\n");
    assert.equal(chat.code, 0, chat.stderr);
    assert.match(
      chat.stderr,
      new RegExp(
        `\\[penguin\\] resuming the imported session in ${named} \\(named with --workspace; ` +
          `recorded in "[^"\\n]+"\\)\\n`,
      ),
    );
    // Placed: --workspace no longer moves it while that directory exists.
    const moveAway = await cli([
      "run",
      "--resume",
      id,
      "--workspace",
      here,
      ...TEST_MODEL,
      "-m",
      "x",
    ]);
    assert.equal(moveAway.code, 2, moveAway.stderr);
    assert.match(moveAway.stderr, /--workspace is only for a session whose workspace is gone/);
    const run = await cli(["run", "--resume", id, ...TEST_MODEL, "-m", "and you?"]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(await Deno.readTextFile(join(named, "where.txt")), `${named}\n${named}\n`);
    assert.deepEqual((await moves(path)).map((m) => m.to), [named]);
  });
});

Deno.test("an imported session whose import directory is gone resumes in the current directory", async () => {
  await withModelRoot({ turns: whereTurns(1) }, async (sb) => {
    const gone = await dir(sb, "import-dir");
    const imp = await runCli(
      ["--root", sb.root, "sessions", "import", "--json", FOREIGN[1]!.file],
      { cwd: gone },
    );
    assert.equal(imp.code, 0, imp.stderr);
    const id = (JSON.parse(imp.stdout) as { foreign: { session_id: string }[] }).foreign[0]!
      .session_id;
    await Deno.remove(gone);
    const run = await runCli(
      ["--root", sb.root, "run", "--resume", id, ...TEST_MODEL, "-m", "go"],
      {
        cwd: sb.workspace,
      },
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(await Deno.readTextFile(join(sb.workspace, "where.txt")), `${sb.workspace}\n`);
  });
});

Deno.test("a file an imported session rotates to after its first resume says it was placed", async () => {
  await withModelRoot({ turns: whereTurns(1) }, async (sb) => {
    // The fixture's file ends with a completed compaction: the first run goes on in _002.
    const text = await Deno.readTextFile(
      "/work/shared/fixtures/penguin-traces/04-compaction_001.jsonl",
    );
    const src = await Deno.makeTempDir({ dir: sb.base, prefix: "traces-" });
    const sid = JSON.parse(text.slice(0, text.indexOf("\n"))).payload.session_id as string;
    await Deno.writeTextFile(join(src, `${sid}_001.jsonl`), text);
    const { id, path } = await importFrom(sb, join(src, `${sid}_001.jsonl`));
    const first = await dir(sb, "first");
    const run = await runCli(
      ["--root", sb.root, "run", "--resume", id, ...TEST_MODEL, "-m", "go"],
      {
        cwd: first,
      },
    );
    assert.equal(run.code, 0, run.stderr);
    const next = path.replace(/_001\.jsonl$/, "_002.jsonl");
    const meta = JSON.parse((await Deno.readTextFile(next)).split("\n")[0]!).payload;
    assert.equal(meta.workspace, first);
    assert.equal(meta.imported_from.placed, true);
    assert.equal(meta.imported_from.workspace_from, "cwd");
  });
});
