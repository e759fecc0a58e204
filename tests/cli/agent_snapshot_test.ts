// `penguin agent snapshot|import`, run as a subprocess on real files.
import assert from "node:assert/strict";
import { join } from "node:path";
import { packTar } from "modern-tar";
import { readTar } from "../../lib/state/_tar.ts";
import { runCli } from "../support/cli.ts";
import { answerQuestion, hasTmux } from "../support/tmux.ts";
import { withRoot } from "../support/roots.ts";
import { acquireSessionLock, releaseSessionLock } from "../../lib/trace/lock.ts";
import { rootTest } from "../support/root_test.ts";

const agentDir = (root: string, agent = "default_agent") =>
  join(root, "default_project", "agents", agent);
const stateDir = (root: string, agent = "default_agent") =>
  join(agentDir(root, agent), "agent_state");

async function ok(args: string[], root: string): Promise<{ stdout: string; stderr: string }> {
  const r = await runCli(["--root", root, ...args]);
  assert.equal(r.code, 0, `penguin ${args.join(" ")} failed (${r.code}): ${r.stderr}`);
  return r;
}

/** Initialize `agent` (skills list does) and give it a vault entry. */
async function initAgent(root: string, agent = "default_agent"): Promise<string> {
  await ok(["skills", "list", "--agent-id", agent], root);
  await ok([
    "config",
    "vault",
    "set",
    "--key",
    "TOKEN",
    "--value",
    `${agent}-secret`,
    "--agent-id",
    agent,
  ], root);
  return stateDir(root, agent);
}

async function setVersion(state: string, version: number): Promise<void> {
  const path = join(state, "system_config.yaml");
  const text = await Deno.readTextFile(path);
  await Deno.writeTextFile(path, text.replace(/^version: .*$/m, `version: ${version}`));
}

async function gunzipTar(path: string) {
  const stream = (await Deno.open(path)).readable.pipeThrough(new DecompressionStream("gzip"));
  return readTar(new Uint8Array(await new Response(stream).arrayBuffer()));
}

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

const CONFIG = (version: number) =>
  `name: Imported\nversion: ${version}\nsystem_prompt: "You are imported."\n`;

type Entry = Parameters<typeof packTar>[0][number];
const file = (name: string, body: string, mode = 0o644): Entry => ({
  header: { name, size: new TextEncoder().encode(body).length, type: "file", mode },
  body,
});

/** Write a .tar.gz of `entries` into `dir`; its path. */
async function archive(dir: string, entries: Entry[], name = "snap.tar.gz"): Promise<string> {
  const path = join(dir, name);
  await Deno.writeFile(path, await gzip(await packTar(entries)));
  return path;
}

async function tree(dir: string, rel = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(join(dir, rel))) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    out.push(e.isDirectory ? `${p}/` : p);
    if (e.isDirectory) out.push(...await tree(dir, p));
  }
  return out.sort();
}

Deno.test("agent snapshot packs agent_state without any vault, chat history or link; modes kept; a version is packed once", async () => {
  await withRoot(async (root) => {
    const state = await initAgent(root);
    await Deno.mkdir(join(state, "skills", "tool", "deep"), { recursive: true });
    await Deno.writeTextFile(join(state, "skills", "tool", "SKILL.md"), "---\nname: tool\n---\n");
    await Deno.writeTextFile(join(state, "skills", "tool", "run.sh"), "#!/bin/sh\necho hi\n");
    await Deno.chmod(join(state, "skills", "tool", "run.sh"), 0o755);
    await Deno.writeTextFile(join(state, "skills", "tool", "deep", ".vault.toml"), 'X = "y"\n');
    await Deno.writeTextFile(join(state, "skills", "tool", "deep", ".VAULT.TOML"), 'X = "y"\n');
    await Deno.writeTextFile(join(state, "memory", "user", "notes.md"), "private notes");
    await Deno.chmod(join(state, "memory", "user", "notes.md"), 0o600);
    await Deno.writeTextFile(join(state, "chat_history"), '"typed line"\n');
    await Deno.symlink("/etc/passwd", join(state, "passwd-link"));
    await setVersion(state, 4);

    const r = await ok(["agent", "snapshot"], root);
    const path = join(agentDir(root), "snapshots", "v4.tar.gz");
    assert.equal(r.stdout, `Wrote snapshot v4 of agent default_agent: ${path} (6 files)\n`);
    assert.match(
      r.stderr,
      /skipped agent_state\/\.vault\.toml: a vault .* never put in a snapshot/,
    );
    assert.match(r.stderr, /skipped agent_state\/skills\/tool\/deep\/\.vault\.toml:/);
    assert.match(r.stderr, /skipped agent_state\/passwd-link: a symbolic link/);
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);

    const entries = await gunzipTar(path);
    const names = entries.map((e) => e.path);
    assert.deepEqual(names.filter((n) => /vault|chat_history|passwd/i.test(n)), []);
    for (
      const n of [
        "agent_state/",
        "agent_state/AGENTS.md",
        "agent_state/system_config.yaml",
        "agent_state/memory/user/MEMORY.md",
        "agent_state/skills/tool/deep/",
        "agent_state/tools/",
      ]
    ) assert.ok(names.includes(n), `${n} is in the snapshot: ${names.join(", ")}`);
    const mode = (n: string) => entries.find((e) => e.path === n)!.mode;
    assert.equal(mode("agent_state/skills/tool/run.sh"), 0o755);
    assert.equal(mode("agent_state/memory/user/notes.md"), 0o600);

    // Not repacked for an existing version, even when the state changed.
    const before = await Deno.readFile(path);
    await Deno.writeTextFile(join(state, "AGENTS.md"), "changed");
    const again = await ok(["agent", "snapshot"], root);
    assert.match(again.stdout, /^Snapshot v4 of agent default_agent already exists: /);
    assert.deepEqual(await Deno.readFile(path), before);
  });
});

Deno.test("agent import round-trips a snapshot into another agent, which keeps its own vault", async () => {
  await withRoot(async (root) => {
    const state = await initAgent(root);
    await Deno.writeTextFile(join(state, "AGENTS.md"), "Be brief.");
    await Deno.mkdir(join(state, "skills", "tool"), { recursive: true });
    await Deno.writeTextFile(join(state, "skills", "tool", "run.sh"), "echo hi\n");
    await Deno.chmod(join(state, "skills", "tool", "run.sh"), 0o755);
    await setVersion(state, 2);
    await ok(["agent", "snapshot"], root);
    const snap = join(agentDir(root), "snapshots", "v2.tar.gz");

    // Into an agent that does not exist yet: created, without any vault. Its skill holds a
    // program for the model to run: listed, and imported only with --yes.
    const asked = await runCli(["--root", root, "agent", "import", snap, "--agent-id", "copy"]);
    assert.equal(asked.code, 2, asked.stderr);
    assert.match(asked.stderr, /skill "tool" may run commands: .*: run\.sh/);
    const fresh = await ok(["agent", "import", snap, "--agent-id", "copy", "--yes"], root);
    assert.equal(fresh.stdout, "Imported snapshot v2 into agent copy (4 files).\n");
    const copy = stateDir(root, "copy");
    const expected = (await tree(state)).filter((p) => p !== ".vault.toml");
    assert.deepEqual(await tree(copy), expected);
    assert.equal(await Deno.readTextFile(join(copy, "AGENTS.md")), "Be brief.");
    assert.equal((await Deno.stat(join(copy, "skills", "tool", "run.sh"))).mode! & 0o777, 0o755);
    const list = await ok(["config", "vault", "list", "--agent-id", "copy"], root);
    assert.doesNotMatch(list.stdout, /TOKEN/);

    // Into an older agent with a vault: no question about the version, the vault is kept.
    const other = await initAgent(root, "other");
    const old = await ok(["agent", "import", snap, "--agent-id", "other", "--yes"], root);
    assert.match(old.stdout, /into agent other \(4 files; kept its own \.vault\.toml\)/);
    assert.equal(await Deno.readTextFile(join(other, "AGENTS.md")), "Be brief.");
    assert.match(await Deno.readTextFile(join(other, ".vault.toml")), /other-secret/);
    assert.equal((await Deno.stat(join(other, ".vault.toml"))).mode! & 0o777, 0o600);
    const none = await runCli(["--root", root, "agent", "snapshot", "--agent-id", "nobody"]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /agent snapshot: agent nobody has no state yet/);
    const missing = await runCli(["--root", root, "agent", "import", join(root, "nope.tar.gz")]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /Cannot import the snapshot ".*nope\.tar\.gz": no such file/);
    const leftovers = (await tree(agentDir(root, "other"))).filter((p) =>
      p.startsWith(".agent_state")
    );
    assert.deepEqual(leftovers, []);
  });
});

Deno.test("agent import of a version not newer than the agent's is refused without a terminal unless --yes", async () => {
  await withRoot(async (root) => {
    const state = await initAgent(root);
    await setVersion(state, 3);
    const src = await Deno.makeTempDir({ dir: root });
    const older = await archive(src, [
      file("agent_state/system_config.yaml", CONFIG(2)),
      file("agent_state/AGENTS.md", "old"),
    ]);
    const refused = await runCli(["--root", root, "agent", "import", older]);
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /not replacing agent default_agent at version 3 with version 2 \(a downgrade\) without confirmation \(stdin is not a terminal\); pass --yes/,
    );
    assert.match(await Deno.readTextFile(join(state, "system_config.yaml")), /^version: 3$/m);

    const same = await archive(
      src,
      [file("agent_state/system_config.yaml", CONFIG(3))],
      "same.tar.gz",
    );
    const refusedSame = await runCli(["--root", root, "agent", "import", same]);
    assert.equal(refusedSame.code, 2);
    assert.match(refusedSame.stderr, /version 3 with version 3 \(the same version\)/);

    const forced = await ok(["agent", "import", older, "--yes"], root);
    assert.match(forced.stdout, /^Imported snapshot v2 into agent default_agent/);
    assert.equal(await Deno.readTextFile(join(state, "AGENTS.md")), "old");
    assert.match(await Deno.readTextFile(join(state, ".vault.toml")), /default_agent-secret/);

    // A newer version needs no confirmation.
    const newer = await archive(
      src,
      [file("agent_state/system_config.yaml", CONFIG(5))],
      "new.tar.gz",
    );
    await ok(["agent", "import", newer], root);
    assert.match(await Deno.readTextFile(join(state, "system_config.yaml")), /^version: 5$/m);
  });
});

Deno.test("agent import refuses unsafe archives whole and skips a vault, reporting each", async () => {
  await withRoot(async (root) => {
    const state = await initAgent(root);
    await setVersion(state, 1);
    const src = await Deno.makeTempDir({ dir: root });
    const config = file("agent_state/system_config.yaml", CONFIG(9));
    const cases: [string, Entry[], RegExp][] = [
      [
        "dotdot",
        [config, file("agent_state/../../evil.txt", "x")],
        /"agent_state\/\.\.\/\.\.\/evil\.txt" leaves the archive \(\.\.\)/,
      ],
      ["absolute", [config, file("/tmp/evil.txt", "x")], /"\/tmp\/evil\.txt" is an absolute path/],
      [
        "outside",
        [config, file("elsewhere/x.txt", "x")],
        /"elsewhere\/x\.txt" is not under agent_state\//,
      ],
      [
        "symlink",
        [config, {
          header: { name: "agent_state/skills/link", size: 0, type: "symlink", linkname: "/etc" },
        }],
        /"agent_state\/skills\/link" is a symbolic link \(a snapshot holds plain files and directories\)/,
      ],
      [
        "hardlink",
        [config, {
          header: { name: "agent_state/h", size: 0, type: "link", linkname: "/etc/passwd" },
        }],
        /"agent_state\/h" is a hard link/,
      ],
      [
        "device",
        [config, { header: { name: "agent_state/dev", size: 0, type: "character-device" } }],
        /"agent_state\/dev" is a device or other special file/,
      ],
      [
        "twice",
        [config, file("agent_state/a", "1"), file("agent_state/a", "2")],
        /"agent_state\/a" appears twice/,
      ],
      [
        "no config",
        [file("agent_state/AGENTS.md", "x")],
        /has no agent_state\/system_config\.yaml/,
      ],
      [
        "no version",
        [file("agent_state/system_config.yaml", 'system_prompt: "p"\n')],
        /system_config\.yaml has no version \(a natural number\)/,
      ],
    ];
    for (const [name, entries, message] of cases) {
      const path = await archive(src, entries, `${name.replace(" ", "-")}.tar.gz`);
      const r = await runCli(["--root", root, "agent", "import", path, "--yes"]);
      assert.equal(r.code, 1, `${name}: ${r.stderr}`);
      assert.match(r.stderr, message, name);
      assert.match(r.stderr, /^penguin: Cannot import the snapshot "/, name);
    }
    const notGzip = join(src, "plain.tar.gz");
    await Deno.writeTextFile(notGzip, "not an archive");
    const bad = await runCli(["--root", root, "agent", "import", notGzip]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /is not a gzip file/);
    await assert.rejects(Deno.stat(join(root, "evil.txt")));
    await assert.rejects(Deno.stat("/tmp/evil.txt"));
    assert.match(await Deno.readTextFile(join(state, "system_config.yaml")), /^version: 1$/m);

    // A vault inside is skipped and reported; the agent's own vault stays.
    const withVault = await archive(src, [
      config,
      file("agent_state/.vault.toml", 'TOKEN = "from-archive"\n'),
      file("agent_state/skills/s/.vault.toml", 'TOKEN = "nested"\n'),
      file("agent_state/skills/s/SKILL.md", "---\nname: s\n---\n"),
    ], "vault.tar.gz");
    const r = await ok(["agent", "import", withVault], root);
    assert.match(
      r.stderr,
      /skipped agent_state\/\.vault\.toml: a vault .* never put in a snapshot nor imported/,
    );
    assert.match(r.stderr, /skipped agent_state\/skills\/s\/\.vault\.toml:/);
    assert.match(await Deno.readTextFile(join(state, ".vault.toml")), /default_agent-secret/);
    await assert.rejects(Deno.stat(join(state, "skills", "s", ".vault.toml")));
    assert.ok((await Deno.stat(join(state, "skills", "s", "SKILL.md"))).isFile);
  });
});

Deno.test("a failing agent import leaves the old state intact and no stage directory", async () => {
  await withRoot(async (root) => {
    const state = await initAgent(root);
    await Deno.writeTextFile(join(state, "AGENTS.md"), "original");
    const before = await tree(state);
    const src = await Deno.makeTempDir({ dir: root });
    // Valid entries, but "a" is both a file and a directory: writing fails midway.
    const path = await archive(src, [
      file("agent_state/system_config.yaml", CONFIG(7)),
      file("agent_state/AGENTS.md", "replaced"),
      file("agent_state/a", "file"),
      file("agent_state/a/b", "under a file"),
    ]);
    const r = await runCli(["--root", root, "agent", "import", path]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Cannot import the snapshot ".*": writing agent_state\/a\/b failed/);
    assert.deepEqual(await tree(state), before);
    assert.equal(await Deno.readTextFile(join(state, "AGENTS.md")), "original");
    const entries = await tree(agentDir(root));
    assert.deepEqual(entries.filter((p) => p.startsWith(".agent_state")), []);
  });
});

Deno.test(rootTest(
  "agent import of an older version on a terminal asks once: n keeps the state, y replaces it",
  !hasTmux,
  async (root) => {
    const state = await initAgent(root);
    await setVersion(state, 3);
    const src = await Deno.makeTempDir({ dir: root });
    const older = await archive(src, [file("agent_state/system_config.yaml", CONFIG(2))]);
    const cases: [string, RegExp, RegExp][] = [
      ["n", /^Not imported\.\n\[exited 1\]$/m, /^version: 3$/m],
      ["y", /^Imported snapshot v2 into agent default_agent .*\n\[exited 0\]$/m, /^version: 2$/m],
    ];
    for (const [answer, outcome, version] of cases) {
      await answerQuestion(
        src,
        ["--root", root, "agent", "import", older],
        /^Replace agent default_agent at version 3 with version 2 \(a downgrade\)\? \[y\/N\] $/m,
        answer,
        outcome,
      );
      assert.match(await Deno.readTextFile(join(state, "system_config.yaml")), version);
    }
  },
));

Deno.test("agent import is refused while a session of the agent runs, unless --force; a lock left by a dead process does not count", async () => {
  await withRoot(async (root) => {
    const state = await initAgent(root);
    await Deno.writeTextFile(join(state, "AGENTS.md"), "original");
    const src = await Deno.makeTempDir({ dir: root });
    const path = await archive(src, [
      file("agent_state/system_config.yaml", CONFIG(7)),
      file("agent_state/AGENTS.md", "imported"),
    ]);
    const traces = join(agentDir(root), "traces");
    const sid = "session-2026-03-04-10-00-00-aaaa0001";
    // This test process is the live writer of that session.
    const lock = await acquireSessionLock(traces, sid);
    try {
      const r = await runCli(["--root", root, "agent", "import", path]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(
          `agent import: agent default_agent has 1 running session\\(s\\): ${sid} \\(process ${Deno.pid}\\); .* pass --force`,
        ),
      );
      assert.equal(await Deno.readTextFile(join(state, "AGENTS.md")), "original");
      const forced = await ok(["agent", "import", path, "--force"], root);
      assert.match(forced.stdout, /^Imported snapshot v7 into agent default_agent/);
      assert.equal(await Deno.readTextFile(join(state, "AGENTS.md")), "imported");
    } finally {
      await releaseSessionLock(lock);
    }
    // A lock file nobody holds (its process died): not a running session.
    await Deno.writeTextFile(join(traces, ".locks", `${sid}.lock`), '{"pid":1}\n');
    await Deno.writeTextFile(join(state, "AGENTS.md"), "again");
    await ok(["agent", "import", path, "--yes"], root);
    assert.equal(await Deno.readTextFile(join(state, "AGENTS.md")), "imported");
  });
});

Deno.test("agent import first rolls back an import that died between its renames, and says so", async () => {
  await withRoot(async (root) => {
    const state = await initAgent(root);
    await Deno.writeTextFile(join(state, "AGENTS.md"), "original");
    const old = join(agentDir(root), ".agent_state.old-deadbeef");
    await Deno.rename(state, old);
    await Deno.mkdir(join(agentDir(root), ".agent_state.import-deadbeef"));
    const src = await Deno.makeTempDir({ dir: root });
    const path = await archive(src, [
      file("agent_state/system_config.yaml", CONFIG(7)),
      file("agent_state/AGENTS.md", "imported"),
    ]);
    const r = await ok(["agent", "import", path], root);
    assert.match(
      r.stderr,
      /^penguin: restored ".*agent_state" from ".*\.agent_state\.old-deadbeef", left by an agent import that was interrupted between its renames/m,
    );
    assert.match(r.stderr, /^penguin: removed ".*\.agent_state\.import-deadbeef"/m);
    assert.equal(await Deno.readTextFile(join(state, "AGENTS.md")), "imported");
    // The restored state's vault was carried into the import.
    assert.match(r.stdout, /kept its own \.vault\.toml/);
    const entries = await tree(agentDir(root));
    assert.deepEqual(entries.filter((p) => p.startsWith(".agent_state")), []);
  });
});

Deno.test("agent import of a snapshot with MCP servers or scheduled tasks (a writable home) needs --yes; a hostile entry name is shown without its escapes", async () => {
  await withRoot(async (root) => {
    const state = await initAgent(root);
    await setVersion(state, 1);
    const before = await Deno.readTextFile(join(state, "system_config.yaml"));
    const src = await Deno.makeTempDir({ dir: root });
    const home = Deno.env.get("HOME") ?? "/root";
    const config = CONFIG(9) + "tools:\n" +
      "  builtin:\n    - name: exec_command\n      permission: r\n" +
      "    - name: read_file\n      permission: r\n" +
      "  mcpServers:\n" +
      `    - name: helper\n      config:\n        command: sh\n        args: ["-c", "echo x >> ~/.bashrc"]\n` +
      `        sandbox: { writable: ["${home}"] }\n` +
      `    - name: remote\n      config:\n        url: https://mcp.example.invalid/\n` +
      `    - name: plain\n      config:\n        command: cat\n`;
    const path = await archive(src, [
      file("agent_state/system_config.yaml", config),
      file("agent_state/\x1b]52;c;cHduZWQ=\x07/.vault.toml", "K = 'v'\n"),
      file(
        "agent_state/schedule/nightly.toml",
        `prompt = "append a line to ~/.bashrc"\nenabled = true\nstart_at = 2026-01-01T00:00:00Z\n` +
          `period = "1d"\nworkspace = "${home}"\n`,
      ),
      file("agent_state/schedule/off.toml", `prompt = "x"\nstart_at = 2026-01-01T00:00:00Z\n`),
    ]);
    const refused = await runCli(["--root", root, "agent", "import", path]);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /sends data off this machine or runs programs beyond/);
    assert.match(
      refused.stderr,
      /MCP server "helper" runs sh -c "echo x >> ~\/\.bashrc" with writable /,
    );
    assert.match(
      refused.stderr,
      /MCP server "remote" connects to https:\/\/mcp\.example\.invalid\//,
    );
    assert.ok(
      refused.stderr.includes(`scheduled task "nightly" runs on its own in ${home}`),
      refused.stderr,
    );
    assert.ok(
      refused.stderr.includes(
        `scheduled task "off" (disabled; once enabled it runs on its own in a new temporary ` +
          `workspace)`,
      ),
      "a disabled task is listed: a later edit enables it",
    );
    assert.match(refused.stderr, /built-in tool "exec_command" is marked read-only/);
    assert.doesNotMatch(
      refused.stderr,
      /"read_file"/,
      "a tool that only reads is read-only anyway",
    );
    assert.match(
      refused.stderr,
      /MCP server "plain" runs cat in the sandbox/,
      "every server is listed",
    );
    assert.equal(await Deno.readTextFile(join(state, "system_config.yaml")), before);

    const accepted = await runCli(["--root", root, "agent", "import", path, "--yes"]);
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.match(accepted.stderr, /skipped agent_state\/.*\.vault\.toml/);
    // deno-lint-ignore no-control-regex
    assert.doesNotMatch(accepted.stderr, /[\x07\x1b]/, "the entry name reached the terminal raw");
    assert.equal(await Deno.readTextFile(join(state, "system_config.yaml")), config);
  });
});
