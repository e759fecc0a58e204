// `penguin run --resume`, `penguin chat --resume`, `/compact` and
// `penguin sessions compact` end to end (subprocesses against the scripted
// model server), resume of the PenguinHarness fixture traces after
// `penguin sessions import`, and resume refusals that must write nothing.
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { extractSummary } from "../../lib/session/mod.ts";
import { removeModel } from "../../lib/state/project_config.ts";
import { addModel } from "../../lib/state/project_config.ts";
import { listSessionFiles } from "../../lib/trace/paths.ts";
import { readTraceFile } from "../../lib/trace/reader.ts";
import { validateTraceFiles } from "../../lib/trace/validate.ts";
import type { OmniMessage } from "../../lib/protocol/types.ts";

import { REPO, runCli } from "../support/cli.ts";
import { type ModelServer, type ScriptedTurn, turn } from "../support/model_server.ts";
import { assertGoodTrace, readSession, type Sandbox, tracesDir } from "../agent/_support.ts";
import { withModelRoot } from "../support/roots.ts";
import {
  assertContext,
  type Atom,
  atomsOfContext,
  compactionAwareServer,
  completes,
  requestAtoms,
  treeDigest,
  userAtom,
} from "../agent/_resume_support.ts";
import { spawnSilentCli } from "../support/cli_silent.ts";
import { wroteA } from "../support/wrote_a.ts";

const FIXTURES = "/work/shared/fixtures/penguin-traces";

/** `penguin --root <root> <args>` from the workspace, `stdin` fed when given. */
type Cli = (args: string[], stdin?: string) => ReturnType<typeof runCli>;

function scenario(
  server: ModelServer,
  body: (sb: Sandbox, cli: Cli) => Promise<void>,
): Promise<void> {
  return withModelRoot(
    server,
    (sb) =>
      body(sb, async (args, stdin) =>
        runCli(["--root", sb.root, ...args], {
          // The workspace by default; its parent once a test removed it.
          cwd: await Deno.stat(sb.workspace).then(
            () => sb.workspace,
            () => join(sb.workspace, ".."),
          ),
          ...(stdin !== undefined ? { stdin } : {}),
        })),
  );
}

function sessionIdOf(stderr: string): string {
  const id = /^Session: (session-\S+)$/m.exec(stderr)?.[1];
  assert.ok(id, `a session id in stderr:\n${stderr}`);
  return id;
}

/** `penguin run -m <prompt>` that starts a session; its id. */
async function firstRun(cli: Cli, prompt: string): Promise<string> {
  const r = await cli(["run", "-m", prompt]);
  assert.equal(r.code, 0, r.stderr);
  return sessionIdOf(r.stderr);
}

/**
 * {@linkcode scenario} on a compaction-aware server of `turns`, after a first
 * `run -m <prompt>`: `body` gets the session's id.
 */
async function afterFirstRun(
  turns: ScriptedTurn[],
  prompt: string,
  body: (sb: Sandbox, cli: Cli, sid: string, server: ModelServer) => Promise<void>,
): Promise<void> {
  const server = await compactionAwareServer(turns);
  await scenario(server, async (sb, cli) => body(sb, cli, await firstRun(cli, prompt), server));
}

/** `run --resume <sid> -m <prompt>` on the pair (custom, `modelId`). */
function resumeOn(sid: string, prompt: string, modelId: string): string[] {
  return ["run", "--resume", sid, "-m", prompt, "--provider", "custom", "--model-id", modelId];
}

/** Configure (custom, other) at the scripted server too. */
async function addOther(
  sb: Sandbox,
  server: ModelServer,
  extra: { context_window?: number } = {},
): Promise<void> {
  await addModel(join(sb.root, "default_project", ".project_config.toml"), {
    provider: "custom",
    model_id: "other",
    base_url: server.baseUrl("openai-chat"),
    client_type: "openai-chat",
    ...extra,
  });
}

const answer = (text: string): Atom => ({ role: "assistant", text, calls: [] });

Deno.test("run --resume continues by id, by trace path and as latest, each time with exactly the committed history", async () => {
  const turns = [...wroteA(), turn.text("One."), turn.text("Two."), turn.text("Three.")];
  await afterFirstRun(turns, "Write a.", async (sb, cli, sid, server) => {
    const path = (await listSessionFiles(tracesDir(sb.root), sid))[0]!.path;
    const targets = [sid, path, "latest"];
    const answers = ["Wrote it.", "One.", "Two."];
    for (const [i, target] of targets.entries()) {
      const r = await cli(["run", "--resume", target, "-m", `Next ${i}.`]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(sessionIdOf(r.stderr), sid);
      assert.match(
        r.stderr,
        new RegExp(`^\\[resumed\\] ${sid} · \\d+ message\\(s\\) in the current context$`, "m"),
      );
      assert.match(r.stderr, new RegExp(`^Workspace: ${sb.workspace}$`, "m"));
      assertContext(requestAtoms(server, 2 + i), [
        ...requestAtoms(server, 1 + i),
        answer(answers[i]!),
        userAtom(`Next ${i}.`),
      ]);
    }
    assert.deepEqual((await listSessionFiles(tracesDir(sb.root), sid)).map((f) => f.path), [path]);
    await assertGoodTrace(sb.root, sid);
  });
});

Deno.test("run --resume --provider --model-id continues on that pair, recorded for later resumes and stats; an unconfigured pair is refused (exit 2) before any request", async () => {
  const turns = [turn.text("One."), turn.text("Two."), turn.text("Three."), turn.text("Four.")];
  await afterFirstRun(turns, "Hello.", async (sb, cli, sid, server) => {
    const refused = await cli(resumeOn(sid, "x", "nope"));
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /^penguin: Cannot resume session \S+ on \(custom, nope\): it is not configured in /m,
    );
    assert.equal(server.requests.length, 1);
    await addOther(sb, server);
    const r = await cli(resumeOn(sid, "Again.", "other"));
    assert.equal(r.code, 0, r.stderr);
    assert.equal(sessionIdOf(r.stderr), sid);
    assert.equal((server.requests[1]!.body as { model: string }).model, "other");
    const recs = await readSession(sb.root, sid);
    const ready = recs.filter((m) =>
      m.type === "event_msg" && m.payload.type === "tool_list_ready"
    );
    assert.equal(ready.length, 2);
    assert.equal((ready[0]!.payload as { model?: unknown }).model, undefined);
    assert.deepEqual((ready[1]!.payload as { model?: unknown }).model, {
      provider: "custom",
      model_id: "other",
    });
    assertContext(requestAtoms(server, 1).slice(1), [
      userAtom("Hello."),
      answer("One."),
      userAtom("Again."),
    ]);
    const switches = () =>
      readSession(sb.root, sid).then((all) =>
        all.flatMap((m) =>
          m.type === "event_msg" && m.payload.type === "model_switched" ? [m.payload] : []
        )
      );
    assert.deepEqual(await switches(), [{
      type: "model_switched",
      provider: "custom",
      model_id: "other",
      previous_provider: "custom",
      previous_model_id: "m",
    }]);
    assert.ok(r.stdout.includes("[model switched] m (custom) → other (custom)"), r.stdout);
    // A later resume without the flags continues on the last pair the trace records.
    const later = await cli(["run", "--resume", sid, "-m", "Later."]);
    assert.equal(later.code, 0, later.stderr);
    assert.equal((server.requests[2]!.body as { model: string }).model, "other");
    assert.equal((await switches()).length, 1);
    // chat --resume switches the same way, back to the recorded pair.
    const chat = await cli(
      ["chat", "--resume", sid, "--provider", "custom", "--model-id", "m"],
      "Back.\n",
    );
    assert.equal(chat.code, 0, chat.stderr);
    assert.equal((server.requests[3]!.body as { model: string }).model, "m");
    assert.deepEqual((await switches()).map((e) => [e.previous_model_id, e.model_id]), [[
      "m",
      "other",
    ], ["other", "m"]]);
    await assertGoodTrace(sb.root, sid);
    // trace stats credits each pair with the tokens of its own requests.
    const stats = await cli(["trace", "stats", "--by", "model", "--json", sid]);
    assert.equal(stats.code, 0, stats.stderr);
    const rows = (JSON.parse(stats.stdout) as { rows: { key: string; requests: number }[] }).rows;
    assert.deepEqual(rows.map((row) => [row.key, row.requests]), [["custom/m", 2], [
      "custom/other",
      2,
    ]]);
  });
});

Deno.test("run --resume --workspace continues a session whose workspace is gone, records the move and tells the model", async () => {
  const turns = [
    ...wroteA(),
    turn.text("Same place."),
    turn.text("Working in the new place."),
    turn.text("Still there."),
  ];
  await afterFirstRun(turns, "Write a.txt.", async (sb, cli, sid, server) => {
    const moved = join(sb.workspace, "..", "moved");
    await Deno.mkdir(moved);
    const to = await Deno.realPath(moved);

    // While the recorded workspace exists, another one is refused and nothing is written.
    const clash = await cli(["run", "--resume", sid, "--workspace", moved, "-m", "x"]);
    assert.equal(clash.code, 2, clash.stderr);
    assert.match(
      clash.stderr,
      new RegExp(
        `^penguin: Cannot resume session ${sid} in "${to}": it works in "${sb.workspace}", which still exists`,
        "m",
      ),
    );
    // The same directory is accepted, and moves nothing.
    const same = await cli(["run", "--resume", sid, "--workspace", sb.workspace, "-m", "Here?"]);
    assert.equal(same.code, 0, same.stderr);
    assert.match(same.stdout, /Same place\./);
    await Deno.remove(sb.workspace, { recursive: true });

    // Gone, without --workspace: the refusal says how to continue.
    const refused = await cli(["run", "--resume", sid, "-m", "x"]);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /Workspace does not exist: .*pass --workspace <dir>/);
    assert.equal(server.requests.length, 3);

    const r = await cli(["run", "--resume", sid, "--workspace", moved, "-m", "Carry on."]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`^Workspace: ${to}$`, "m"));
    assert.match(r.stdout, /Working in the new place\./);
    assert.ok(r.stdout.includes(`[workspace moved] ${sb.workspace} → ${to}`), r.stdout);
    // The model was told, before the new message.
    const sent = JSON.stringify(server.requests[3]!.body);
    assert.ok(
      sent.indexOf("[workspace moved]") >= 0 &&
        sent.indexOf("[workspace moved]") < sent.indexOf("Carry on."),
      sent,
    );
    const records = await assertGoodTrace(sb.root, sid);
    const movedEvents = records.filter((m) =>
      m.type === "event_msg" && m.payload.type === "workspace_moved"
    );
    assert.deepEqual(movedEvents.map((m) => m.payload), [
      { type: "workspace_moved", from: sb.workspace, to },
    ]);

    // A later resume works in the new workspace without --workspace, and records no second move.
    const again = await cli(["run", "--resume", sid, "-m", "And again."]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, new RegExp(`^Workspace: ${to}$`, "m"));
    const after = await assertGoodTrace(sb.root, sid);
    assert.equal(
      after.filter((m) => m.type === "event_msg" && m.payload.type === "workspace_moved").length,
      1,
    );
    // The note is part of the history the next request sends, exactly once.
    const last = JSON.stringify(server.requests[4]!.body);
    assert.equal(last.split("[workspace moved]").length - 1, 1);
  });
});

Deno.test("chat --resume latest continues the latest session and re-renders its history", async () => {
  const turns = [...wroteA(), turn.text("Yes, a.txt holds A.")];
  await afterFirstRun(turns, "Write a.", async (sb, cli, sid, server) => {
    const r = await cli(["chat", "--resume", "latest"], "Is it there?\n");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^Session: ${sid}$`, "m"));
    const n = /^\[resumed\] (\S+) · (\d+) message\(s\) in the current context$/m.exec(r.stdout);
    assert.ok(n, r.stdout);
    assert.equal(n[1], sid);
    assert.equal(Number(n[2]), 4, "prompt, call, output, answer");
    const after = r.stdout.slice(r.stdout.indexOf("[resumed]"));
    assert.ok(
      after.indexOf("Wrote it.") < after.indexOf("Yes, a.txt holds A."),
      "history is re-rendered first",
    );
    assertContext(requestAtoms(server, 2), [
      ...requestAtoms(server, 1),
      answer("Wrote it."),
      userAtom("Is it there?"),
    ]);
    assert.match(
      r.stdout,
      new RegExp(`To continue this conversation: penguin chat --resume ${sid}`),
    );
    await assertGoodTrace(sb.root, sid);
  });
});

Deno.test("chat --resume --workspace continues a session whose workspace is gone and records the move", async () => {
  const turns = [turn.text("First."), turn.text("Moved along.")];
  await afterFirstRun(turns, "Start.", async (sb, cli, sid) => {
    const moved = join(sb.workspace, "..", "moved-chat");
    await Deno.mkdir(moved);
    const to = await Deno.realPath(moved);
    await Deno.remove(sb.workspace, { recursive: true });
    const r = await cli(["chat", "--resume", sid, "--workspace", moved], "Go on.\n");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Moved along\./);
    assert.ok(r.stdout.includes(`[workspace moved] ${sb.workspace} → ${to}`), r.stdout);
    const records = await assertGoodTrace(sb.root, sid);
    assert.deepEqual(
      records.filter((m) => m.type === "event_msg" && m.payload.type === "workspace_moved")
        .map((m) => m.payload),
      [{ type: "workspace_moved", from: sb.workspace, to }],
    );
  });
});

Deno.test("resume takes the session lock before it reads the trace: a held session is refused unread", async () => {
  const turns = [turn.text("Hi.")];
  await afterFirstRun(turns, "Hello.", async (sb, cli, sid, server) => {
    const path = (await listSessionFiles(tracesDir(sb.root), sid))[0]!.path;
    // Another process holds the lock and is rewriting the trace: resuming must not read it.
    const holder = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", `${REPO}tests/trace/_child.ts`, "hold", tracesDir(sb.root), sid],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const lines = holder.stdout.pipeThrough(new TextDecoderStream()).getReader();
    try {
      const first = await lines.read();
      assert.equal(first.value?.trim(), "held", "the helper holds the lock");
      await Deno.writeTextFile(path, '{"half a record by the lock holder\n');
      const before = await treeDigest(sb.root);
      for (const args of [["run", "--resume", sid, "-m", "x"], ["chat", "--resume", sid]]) {
        const r = await cli(args, "x\n");
        assert.equal(r.code, 1, r.stderr);
        assert.match(
          r.stderr,
          new RegExp(
            `^penguin: Cannot resume session ${sid}: it is locked by process ${holder.pid} `,
          ),
        );
        assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      }
      assert.equal(await treeDigest(sb.root), before, "nothing changed on disk");
      assert.equal(server.requests.length, 1);
    } finally {
      await holder.stdin.close();
      await lines.cancel();
      await holder.status;
    }
  });
});

Deno.test("resume refusals are one clear line and change nothing on disk", async () => {
  const turns = [turn.text("Hi."), { ...turn.text("slow"), stall_after: 1 }];
  await afterFirstRun(turns, "Hello.", async (sb, cli, sid, server) => {
    const path = (await listSessionFiles(tracesDir(sb.root), sid))[0]!.path;
    const config = join(sb.root, "default_project", ".project_config.toml");

    // Resume locks before it reads, so a refusal may take over and clean up the lock
    // file a killed process left behind; everything else must stay byte-identical.
    // The live run's sandbox holds a missing `.git` in its writable directories with an empty
    // read-only stand-in from its session's start (the command warm-up), whenever that lands.
    const digest = async () =>
      (await treeDigest(sb.root)).split("\n").filter((l) =>
        !/\/traces\/\.locks\/./.test(l) && !/^d .*\/\.git$/.test(l)
      ).join("\n");
    const refused = async (args: string[], code: number, message: RegExp) => {
      const before = await digest();
      const r = await cli(args);
      assert.equal(r.code, code, r.stderr);
      assert.match(r.stderr, message);
      assert.equal(
        r.stderr.trim().split("\n").filter((l) => !l.startsWith("Run ")).length,
        1,
        r.stderr,
      );
      assert.equal(await digest(), before, `${args.join(" ")} changed nothing`);
    };

    // Locked: a live `penguin run --resume` holds the session while its request stalls.
    const live = spawnSilentCli(
      ["--root", sb.root, "run", "--resume", sid, "-m", "Wait."],
      sb.workspace,
    );
    try {
      // Wait on the server (or the child's exit), not on the clock; the deadline is a failsafe.
      let exited = false;
      live.status.then(() => (exited = true));
      const failsafe = Date.now() + 300_000;
      while (server.requests.length < 2 && !exited && Date.now() < failsafe) {
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(server.requests.length, 2, "the live run reached its request");
      // The live run records its request_begin alongside the request: wait for the record, so
      // only the refusals below can change the tree from here on.
      while (
        ((await Deno.readTextFile(path)).match(/"type":"request_begin"/g) ?? []).length < 2 &&
        !exited && Date.now() < failsafe
      ) {
        await new Promise((r) => setTimeout(r, 20));
      }
      await refused(
        ["run", "--resume", sid, "-m", "x"],
        1,
        new RegExp(`^penguin: Cannot resume session ${sid}: it is locked by process ${live.pid} `),
      );
      await refused(["chat", "--resume", sid], 1, /it is locked by process/);
    } finally {
      live.kill("SIGKILL");
      await live.status;
    }

    await removeModel(config, { provider: "custom", model_id: "m" });
    await addModel(config, {
      provider: "custom",
      model_id: "other",
      base_url: server.baseUrl("openai-chat"),
      client_type: "openai-chat",
    }, { setDefault: true });
    await refused(
      ["run", "--resume", sid, "-m", "x"],
      2,
      /: its model \(custom, m\) is not configured in .*; configured models: \(custom, other\)\. Add it back with: penguin config model add --provider custom --model-id m$/m,
    );
    await addModel(config, {
      provider: "custom",
      model_id: "m",
      base_url: server.baseUrl("openai-chat"),
      client_type: "openai-chat",
    });

    const text = await Deno.readTextFile(path);
    await Deno.writeTextFile(path, "{not json\n" + text.slice(text.indexOf("\n") + 1));
    await refused(
      ["run", "--resume", sid, "-m", "x"],
      1,
      /does not start with a readable session_meta/,
    );
    await Deno.writeTextFile(path, text);

    await Deno.remove(sb.workspace, { recursive: true });
    await refused(
      ["run", "--resume", sid, "-m", "x"],
      1,
      /Workspace does not exist: .* \(recorded by session .*; a workspace is never recreated\)/,
    );
    await refused(
      ["run", "--resume", "session-2026-01-01-00-00-00-00000000", "-m", "x"],
      1,
      /Session does not exist/,
    );
  });
});

/** Copy fixture files to `dir`, pointing their session_meta at `workspace`. */
async function localFixtures(names: string[], dir: string, workspace: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of names) {
    const text = await Deno.readTextFile(join(FIXTURES, name));
    const nl = text.indexOf("\n");
    const meta = JSON.parse(text.slice(0, nl));
    meta.payload.workspace = workspace;
    const sid = meta.payload.session_id as string;
    const index = /_(\d{3})\.jsonl$/.exec(name)?.[1] ?? "001";
    const path = join(dir, `${sid}_${index}.jsonl`);
    await Deno.writeTextFile(path, JSON.stringify(meta) + text.slice(nl));
    out.push(path);
  }
  return out;
}

const FIXTURE_CASES: {
  name: string;
  files: string[];
  expect: (recs: OmniMessage[][]) => Atom[];
}[] = [
  {
    name: "02 tool calls",
    files: ["02-tool-calls.jsonl"],
    expect: (f) => atomsOfContext(completes(f[0]!)),
  },
  {
    name: "03 resumed",
    files: ["03-resumed.jsonl"],
    expect: (f) => atomsOfContext(completes(f[0]!)),
  },
  {
    name: "04 compaction pair (resumes from _002, which starts with the summary)",
    files: ["04-compaction_001.jsonl", "04-compaction_002.jsonl"],
    expect: (f) => atomsOfContext(completes(f[1]!)),
  },
  {
    name:
      "04 closed first file alone (the summary is rebuilt exactly as the harness wrote it into _002)",
    files: ["04-compaction_001.jsonl"],
    expect: (f) => {
      const last = completes(f[0]!).filter((m) => m.type === "text" && m.role === "assistant").at(
        -1,
      )!;
      const summary = extractSummary(last.type === "text" ? last.text : "");
      assert.ok(summary !== "");
      return [userAtom(`[context_summary]\n${summary}\n[/context_summary]`)];
    },
  },
  {
    name: "05 subagent parent (child imported too)",
    files: ["05-subagent-parent.jsonl", "05-subagent-child.jsonl"],
    expect: (f) => atomsOfContext(completes(f[0]!)),
  },
];

for (const c of FIXTURE_CASES) {
  Deno.test(`fixture ${c.name}: imported with "penguin sessions import", resumed, sends the recorded context`, async () => {
    const server = await compactionAwareServer([turn.text("Resumed fine.")]);
    await scenario(server, async (sb, cli) => {
      await addModel(join(sb.root, "default_project", ".project_config.toml"), {
        provider: "custom",
        model_id: "mock",
        base_url: server.baseUrl("openai-chat"),
        client_type: "openai-chat",
      });
      const dir = await Deno.makeTempDir({ dir: sb.root, prefix: "fixtures-" });
      const files = await localFixtures(c.files, dir, sb.workspace);
      const imported = await cli(["sessions", "import", ...files]);
      assert.equal(imported.code, 0, imported.stderr);
      const recs = await Promise.all(files.map(async (f) => (await readTraceFile(f)).messages));
      const meta = recs[0]![0]!.payload as { session_id: string; system_prompt: string };
      const r = await cli(["run", "--resume", meta.session_id, "-m", "continue"]);
      assert.equal(r.code, 0, r.stderr);
      assertContext(requestAtoms(server, 0), [
        { role: "system", text: meta.system_prompt },
        ...c.expect(recs),
        userAtom("continue"),
      ]);
      const report = await validateTraceFiles([tracesDir(sb.root)]);
      assert.deepEqual(report.problems, []);
      const own = await listSessionFiles(tracesDir(sb.root), meta.session_id);
      const latest = (await readTraceFile(own.at(-1)!.path)).messages;
      assert.deepEqual(
        completes(latest).slice(-2).map((m) => m.type === "text" ? m.text : m.type),
        ["continue", "Resumed fine."],
      );
      if (c.files.length === 1 && c.files[0]!.includes("_001")) {
        assert.equal(own.length, 2, "the closed file rotated to _002");
        // The first resume of the imported session records where it placed it (here, where it
        // was imported: tests/cli/import_first_resume_test.ts).
        assert.deepEqual(
          latest.filter((m) => m.type !== "event_msg" || m.payload.type !== "workspace_moved")
            .slice(0, 3).map((m) => m.type === "session_meta" ? m.type : m.payload.type),
          ["session_meta", "tool_list_ready", "text"],
        );
        assert.deepEqual(
          latest.filter((m) => m.type === "event_msg" && m.payload.type === "workspace_moved")
            .map((m) => m.payload),
          [{ type: "workspace_moved", from: sb.workspace, to: sb.workspace, reason: "imported" }],
        );
      }
    });
  });
}

Deno.test("sessions compact summarizes a session now; the next resume starts from the summary", async () => {
  const server = await compactionAwareServer(
    [turn.text("Hi."), turn.text("Continuing from the summary.")],
    [turn.text("[summary]The user said hello.[/summary]")],
  );
  await scenario(server, async (sb, cli) => {
    const sid = await firstRun(cli, "Hello.");
    const r = await cli(["sessions", "compact", sid]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^\[compaction\] summarizing context \(manual\)…$/m);
    assert.match(r.stdout, /^\[compaction\] done; continuing with the summarized context/m);
    const again = await cli(["sessions", "compact", sid]);
    assert.equal(again.code, 0);
    assert.match(
      again.stdout,
      new RegExp(`^Nothing to compact in ${sid}: it was just compacted$`, "m"),
    );
    assert.equal((await listSessionFiles(tracesDir(sb.root), sid)).length, 1);
    const next = await cli(["run", "--resume", sid, "-m", "Where were we?"]);
    assert.equal(next.code, 0, next.stderr);
    assertContext(requestAtoms(server, 2).slice(1), [
      userAtom("[context_summary]\nThe user said hello.\n[/context_summary]"),
      userAtom("Where were we?"),
    ]);
    assert.equal((await listSessionFiles(tracesDir(sb.root), sid)).length, 2);
    await assertGoodTrace(sb.root, sid);
  });
});

Deno.test("/compact in chat compacts the running conversation; /compact before any turn says nothing to compact", async () => {
  const server = await compactionAwareServer(
    [turn.text("Hi."), turn.text("After.")],
    [turn.text("[summary]Greeted.[/summary]")],
  );
  await scenario(server, async (sb, cli) => {
    const r = await cli(["chat"], "/compact\nHello.\n/compact\nAnd now?\n");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^\[compaction\] nothing to compact yet$/m);
    assert.match(r.stdout, /^\[compaction\] done; continuing with the summarized context/m);
    assertContext(requestAtoms(server, 2).slice(1), [
      userAtom("[context_summary]\nGreeted.\n[/context_summary]"),
      userAtom("And now?"),
    ]);
    const sid = sessionIdOf(r.stdout);
    await assertGoodTrace(sb.root, sid);
    assert.equal(
      basename((await listSessionFiles(tracesDir(sb.root), sid)).at(-1)!.path).slice(-9),
      "002.jsonl",
    );
  });
});

Deno.test("a switched session that compacts starts its next file on the pair it runs on, with that model's context window", async () => {
  const server = await compactionAwareServer(
    [turn.text("One."), turn.text("Two."), turn.text("Three.")],
    [turn.text("[summary]Two answers so far.[/summary]")],
  );
  await scenario(server, async (sb, cli) => {
    const sid = await firstRun(cli, "Hello.");
    await addOther(sb, server, { context_window: 4242 });
    const switched = await cli(resumeOn(sid, "Again.", "other"));
    assert.equal(switched.code, 0, switched.stderr);
    const compact = await cli(["sessions", "compact", sid]);
    assert.equal(compact.code, 0, compact.stderr);
    const next = await cli(["run", "--resume", sid, "-m", "And now?"]);
    assert.equal(next.code, 0, next.stderr);
    const models = server.requests.map((q) => (q.body as { model: string }).model);
    assert.deepEqual(models, ["m", "other", "other", "other"]);
    const files = await listSessionFiles(tracesDir(sb.root), sid);
    assert.equal(files.length, 2);
    const head = (await readTraceFile(files[1]!.path)).messages[0]!;
    assert.equal(head.type, "session_meta");
    const meta = head.payload as {
      provider: string;
      model_id: string;
      model_context_window: unknown;
    };
    assert.deepEqual([meta.provider, meta.model_id, meta.model_context_window], [
      "custom",
      "other",
      4242,
    ]);
    await assertGoodTrace(sb.root, sid);
  });
});
