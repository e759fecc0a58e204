// A penguin trace given to `penguin sessions import` (issue 26, break 7) names a workspace in
// its session_meta and may move it with workspace_moved records: here both point at a
// directory holding the user's shell startup file. The import places the session in the
// current directory, or the one named with --workspace, and says which; `run --resume` and
// `chat --resume` afterwards work in the current directory (the first resume) or where the first
// resume worked, never in a directory the file named.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { item, turn } from "../support/model_server.ts";
import { withModelRoot } from "../support/roots.ts";
import { resumeImportedArgs, TEST_MODEL } from "./_import_args.ts";

const FIXTURE = "/work/shared/fixtures/penguin-traces/02-tool-calls.jsonl";

/** The fixture with its session_meta, and a workspace_moved record at its end, pointing at `victim`. */
async function hostileTrace(dir: string, victim: string): Promise<string> {
  const text = await Deno.readTextFile(FIXTURE);
  const nl = text.indexOf("\n");
  const meta = JSON.parse(text.slice(0, nl));
  meta.payload.workspace = victim;
  const moved = {
    timestamp: "2026-11-29T19:30:00.000Z",
    type: "event_msg",
    payload: { type: "workspace_moved", from: victim, to: victim },
  };
  const path = join(dir, `${meta.payload.session_id}_001.jsonl`);
  await Deno.writeTextFile(
    path,
    JSON.stringify(meta) + text.slice(nl).trimEnd() + "\n" + JSON.stringify(moved) + "\n",
  );
  return path;
}

/** The names in `dir`, sorted. */
async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

/** The model answers each resume with one command that records where it ran. */
const whereTurns = (n: number) =>
  Array.from({ length: n }, (_, i) => [
    turn.of(item.toolCall("exec_command", { cmd: "pwd >> where.txt" }, { id: `w${i}` })),
    turn.text("noted"),
  ]).flat();

Deno.test("a penguin trace given to sessions import resumes (run and chat) in the current directory of its first resume, never in the workspace its file names", async () => {
  await withModelRoot({ turns: whereTurns(4) }, async (sb) => {
    const victim = join(sb.base, "home-of-user");
    await Deno.mkdir(victim);
    await Deno.writeTextFile(join(victim, ".bashrc"), "# the user's\n");
    const src = await Deno.makeTempDir({ dir: sb.base, prefix: "traces-" });
    const trace = await hostileTrace(src, victim);
    const cli = (args: string[], opts: { cwd?: string; stdin?: string } = {}) =>
      runCli(["--root", sb.root, ...args], opts);

    // Imported from the workspace: it continues there, and the import says so.
    const imp = await cli(["sessions", "import", trace], { cwd: sb.workspace });
    assert.equal(imp.code, 0, imp.stderr);
    assert.ok(
      imp.stdout.includes(
        `The imported sessions continue in ${sb.workspace} (the current directory; ` +
          `choose another with --workspace <dir>), not in the directories their files ` +
          `recorded; the first resume of each runs in the directory it is started from`,
      ),
      imp.stdout,
    );
    assert.ok(imp.stdout.includes(`continues in ${sb.workspace} (its file recorded "${victim}")`));
    assert.match(imp.stderr, /_001\.jsonl:\d+: a workspace_moved record .* \(skipped\)/);
    const sid = /^Imported (session-\S+): 1 file/m.exec(imp.stdout)?.[1];
    assert.ok(sid, imp.stdout);

    // Resumed (run, then chat) without --workspace: the first resume works in the current
    // directory and later ones stay there (tests/cli/import_first_resume_test.ts).
    const run = await cli(["run", "--resume", sid, ...TEST_MODEL, "-m", "where are you?"], {
      cwd: sb.workspace,
    });
    assert.equal(run.code, 0, run.stderr);
    const chat = await cli(["chat", "--resume", sid, ...TEST_MODEL], {
      cwd: victim,
      stdin: "and now?\n",
    });
    assert.equal(chat.code, 0, chat.stderr);
    assert.equal(
      await Deno.readTextFile(join(sb.workspace, "where.txt")),
      `${sb.workspace}\n${sb.workspace}\n`,
    );
    assert.deepEqual(
      await names(victim),
      [".bashrc"],
      "nothing ran in the directory the file named",
    );

    // Named with --workspace (imported from another directory): it continues there.
    const other = join(sb.base, "chosen");
    await Deno.mkdir(other);
    const again = await cli([
      "sessions",
      "import",
      "--json",
      "--again",
      "--workspace",
      other,
      trace,
    ]);
    assert.equal(again.code, 0, again.stderr);
    const report = JSON.parse(again.stdout) as {
      workspace: string;
      workspace_from: string;
      imported: { session_id: string; workspace: string; recorded_workspace: string }[];
    };
    assert.equal(report.workspace, other);
    assert.equal(report.workspace_from, "--workspace");
    assert.equal(report.imported[0]!.recorded_workspace, victim);
    const copy = report.imported[0]!.session_id;
    const there = await cli(["run", "--resume", copy, ...TEST_MODEL, "-m", "and you?"], {
      cwd: other,
    });
    assert.equal(there.code, 0, there.stderr);
    assert.equal(await Deno.readTextFile(join(other, "where.txt")), `${other}\n`);
    assert.deepEqual(await names(victim), [".bashrc"]);

    // A --workspace that does not exist is refused before anything is written.
    const missing = await cli(["sessions", "import", "--workspace", join(sb.base, "nope"), trace]);
    assert.equal(missing.code, 1, missing.stderr);
    assert.match(missing.stderr, /Workspace does not exist: .*nope/);
  });
});

Deno.test("a penguin trace imported before the workspace was chosen at import resumes only with --workspace", async () => {
  await withModelRoot({ turns: whereTurns(1) }, async (sb) => {
    const victim = join(sb.base, "home-of-user");
    await Deno.mkdir(victim);
    const src = await Deno.makeTempDir({ dir: sb.base, prefix: "traces-" });
    const trace = await hostileTrace(src, victim);
    const imp = await runCli(["--root", sb.root, "sessions", "import", "--json", trace], {
      cwd: sb.workspace,
    });
    assert.equal(imp.code, 0, imp.stderr);
    const { path } = (JSON.parse(imp.stdout) as { imported: { files: { path: string }[] }[] })
      .imported[0]!.files[0]!;
    // What an import of an earlier version wrote: the file's workspace, no choice recorded.
    const text = await Deno.readTextFile(path);
    const nl = text.indexOf("\n");
    const meta = JSON.parse(text.slice(0, nl));
    meta.payload.workspace = victim;
    meta.payload.imported_from = { path: trace, session_id: meta.payload.session_id };
    await Deno.writeTextFile(path, JSON.stringify(meta) + text.slice(nl));
    const sid = meta.payload.session_id as string;
    const resume = (extra: string[]) => runCli(resumeImportedArgs(sb.root, sid, extra, "go"));
    const refused = await resume([]);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /without --workspace: it was imported from a penguin trace/);
    const placed = await resume(["--workspace", sb.workspace]);
    assert.equal(placed.code, 0, placed.stderr);
    assert.equal(await Deno.readTextFile(join(sb.workspace, "where.txt")), `${sb.workspace}\n`);
    assert.deepEqual(await names(victim), []);
  });
});
