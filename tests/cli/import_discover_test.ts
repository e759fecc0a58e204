// `penguin sessions import --from <harness>` without a file: the harness's
// own session directory is searched (--all, --latest, --workspace <dir>);
// one summary line per session (the loss report under --verbose); a
// session imported before is not imported again unless --again; `sessions
// show` and the HTML export say where an imported session came from.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { withRoot } from "../support/roots.ts";

const PEERS = "/work/shared/fixtures/peer-sessions";
// Each harness's state directory, as its environment variable names it (the fixtures keep that layout).
const CODEX = { CODEX_HOME: join(PEERS, "codex", "01-rich") };
const CLAUDE = { CLAUDE_CONFIG_DIR: join(PEERS, "claude", "03-subagent") };
const PI = { PI_CODING_AGENT_DIR: join(PEERS, "pi", "01-rich") };
const CODEX_ID = "01a230ef-63a8-7182-992c-12d7d5946087";

async function sessionIds(root: string): Promise<string[]> {
  const r = await runCli(["--root", root, "sessions", "list", "--all", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as Array<{ session_id: string }>).map((s) => s.session_id).sort();
}

const importArgs = (root: string, ...rest: string[]) => [
  "--root",
  root,
  "sessions",
  "import",
  ...rest,
];

Deno.test("sessions import --from codex --all finds ~/.codex/sessions; one summary line; again: already imported unless --again", async () => {
  await withRoot(async (root) => {
    const ws = await Deno.makeTempDir({ dir: root });
    const r = await runCli(importArgs(root, "--from", "codex", "--all"), { env: CODEX, cwd: ws });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split("\n");
    assert.match(
      lines[0]!,
      new RegExp(
        `^Imported Codex session ${CODEX_ID} as (session-\\S+): 3 message\\(s\\), 9 tool call\\(s\\); ` +
          // Codex's system prompt and developer message (penguin's own replace them); the UI
          // events and per-turn settings the model never saw are not named.
          `not imported: session_meta base_instructions ×1, response_item message role developer ×1 ` +
          `\\(--verbose for why\\)$`,
      ),
    );
    assert.equal(lines[1], "1 session(s) imported, 0 refused");
    assert.doesNotMatch(r.stdout, /Loss report/);
    const id = /as (session-\S+):/.exec(lines[0]!)![1]!;
    const before = await sessionIds(root);
    assert.deepEqual(before, [id]);

    const again = await runCli(importArgs(root, "--from", "codex", "--all"), {
      env: CODEX,
      cwd: ws,
    });
    assert.equal(again.code, 0, again.stderr);
    assert.match(
      again.stdout,
      new RegExp(
        `rollout-\\S+\\.jsonl: already imported as ${id} \\(nothing written; --again imports a new copy\\)$`,
        "m",
      ),
    );
    assert.match(again.stdout, /^0 session\(s\) imported, 0 refused$/m);
    assert.deepEqual(await sessionIds(root), before, "nothing was created");

    const copy = await runCli(
      importArgs(root, "--from", "codex", "--all", "--again", "--verbose"),
      {
        env: CODEX,
        cwd: ws,
      },
    );
    assert.equal(copy.code, 0, copy.stderr);
    assert.match(copy.stdout, /^ {2}Loss report \(not imported\):$/m, "--verbose: the full report");
    assert.equal((await sessionIds(root)).length, 2);
  });
});

Deno.test("sessions import --from without a file: --workspace picks the sessions recorded there; none here is one line, exit 1", async () => {
  await withRoot(async (root) => {
    const ws = await Deno.realPath(await Deno.makeTempDir({ dir: root, prefix: "ws-" }));
    // The recorded directory of the fixture is long gone: from here nothing matches.
    const none = await runCli(importArgs(root, "--from", "codex"), { env: CODEX, cwd: ws });
    assert.equal(none.code, 1);
    assert.equal(
      none.stderr,
      `penguin: sessions import: none of the 1 Codex session(s) in ${
        join(CODEX.CODEX_HOME, "sessions")
      } was recorded in ${ws} (--all imports them all, --workspace <dir> picks another directory)\n`,
    );
    assert.deepEqual(await sessionIds(root), []);
    // A copy of the session recorded in `ws`.
    const home = join(root, "codex-home");
    const src = join(CODEX.CODEX_HOME, "sessions", "2026", "12", "01");
    const name = (await Array.fromAsync(Deno.readDir(src)))[0]!.name;
    await Deno.mkdir(join(home, "sessions", "2026", "12", "01"), { recursive: true });
    const text = await Deno.readTextFile(join(src, name));
    const recorded = /"cwd":"([^"]+)"/.exec(text)![1]!;
    await Deno.writeTextFile(
      join(home, "sessions", "2026", "12", "01", name),
      text.replaceAll(recorded, ws),
    );
    const other = await Deno.makeTempDir({ dir: root, prefix: "elsewhere-" });
    const here = await runCli(
      importArgs(root, "--from", "codex", "--latest", "--workspace", ws),
      { env: { CODEX_HOME: home }, cwd: other },
    );
    assert.equal(here.code, 0, here.stderr);
    assert.match(here.stdout, new RegExp(`^Imported Codex session ${CODEX_ID} as session-`, "m"));
    // An empty session directory.
    const empty = await runCli(importArgs(root, "--from", "pi"), {
      env: { PI_CODING_AGENT_DIR: join(root, "no-pi") },
      cwd: ws,
    });
    assert.equal(empty.code, 1);
    assert.match(
      empty.stderr,
      /^penguin: sessions import: no pi session found in .*no-pi\/sessions \(give a file instead\)\n$/,
    );
    // --all with files is a usage error.
    const mixed = await runCli(importArgs(root, "--all", join(src, name)));
    assert.equal(mixed.code, 2);
  });
});

Deno.test("sessions import --from claude|pi --all finds ~/.claude/projects and pi's sessions; show and the HTML header name the origin", async () => {
  await withRoot(async (root) => {
    const claude = await runCli(importArgs(root, "--from", "claude", "--all"), { env: CLAUDE });
    assert.equal(claude.code, 0, claude.stderr);
    // The subagent transcript comes in with its parent, not as a session of its own.
    assert.match(
      claude.stdout,
      /^Imported Claude Code session \S+ as session-\S+ and 1 subagent session\(s\): \d+ message\(s\), \d+ tool call\(s\); /m,
    );
    assert.match(claude.stdout, /^1 session\(s\) imported, 0 refused$/m);
    const pi = await runCli(importArgs(root, "--from", "pi", "--all"), { env: PI });
    assert.equal(pi.code, 0, pi.stderr);
    assert.match(pi.stdout, /^Imported pi session (\S+) as (session-\S+): /m);
    const [, piId, sid] = /^Imported pi session (\S+) as (session-\S+): /m.exec(pi.stdout)!;
    const show = await runCli(["--root", root, "sessions", "show", sid!]);
    assert.equal(show.code, 0, show.stderr);
    assert.match(
      show.stdout,
      new RegExp(`^ {2}imported {3}from pi \\S* ?session ${piId} \\(/.*\\.jsonl\\)$`, "m"),
    );
    assert.doesNotMatch(show.stdout, /undefined/);
    const html = await runCli(["--root", root, "trace", "export", sid!, "--format", "html"]);
    assert.equal(html.code, 0, html.stderr);
    assert.match(html.stdout, /imported from/);
    assert.ok(html.stdout.includes(`session ${piId}`), "the origin is in the header");
  });
});
