// A newcomer's bad input: a data root that is a file, a data root on a read-only file system, a
// trace directory that fills up. Each is one line on stderr saying what was attempted, what was
// found and where, with the README's exit code and no stack trace. The read-only and full file
// systems are real: the CLI runs under bubblewrap with the root bound read-only, or with the
// traces directory on a tiny tmpfs.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type CliResult,
  inRoot,
  mcpAddArgs,
  modelAddArgs,
  penguinArgv,
  penguinEnv,
  REPO,
  runCli,
  runCliOk,
  runText,
} from "../support/cli.ts";
import { withModelRoot, withRoot } from "../support/roots.ts";
import { turn } from "../support/model_server.ts";
import { rootTest } from "../support/root_test.ts";

/** No stack trace and no "internal error": the error is one a user can act on. */
function assertUserError(r: CliResult): void {
  assert.doesNotMatch(r.stderr, /internal error|\n\s+at |PENGUIN_DEBUG/, r.stderr);
}

/** `r` exited `code` with `stderr` matching `re`, an error a user can act on. */
function assertUserFailure(r: CliResult, code: number, re: RegExp): void {
  assert.equal(r.code, code, r.stderr);
  assert.match(r.stderr, re);
  assertUserError(r);
}

Deno.test("a data root that is a file is a config error naming it and where it came from", async () => {
  await withRoot(async (dir) => {
    const file = join(dir, "data");
    await Deno.writeTextFile(file, "");
    for (const args of [["sessions", "list"], ["run", "-m", "hi"], ["memory", "list"]]) {
      const r = await runCli(["--root", file, ...args]);
      assertUserFailure(r, 2, /Cannot use the data root ".*data" \(from --root\): it is a file/);
    }
    const env = await runCli(["sessions", "list"], { env: { PENGUIN_HOME: join(file, "sub") } });
    assertUserFailure(env, 2, /data root ".*data\/sub" \(from PENGUIN_HOME\): a part of its path/);
  });
});

const BWRAP = (() => {
  try {
    const out = new Deno.Command("bwrap", {
      args: ["--dev-bind", "/", "/", "true"],
      stdout: "null",
      stderr: "null",
    }).outputSync();
    return out.success;
  } catch {
    return false;
  }
})();

/** Run penguin under bubblewrap with `mounts` (bwrap arguments) over a view of the whole system. */
function runUnder(mounts: string[], args: string[]): Promise<CliResult> {
  return runText("bwrap", {
    args: ["--dev-bind", "/", "/", ...mounts, Deno.execPath(), ...penguinArgv(), ...args],
    cwd: REPO,
    env: penguinEnv(),
  });
}

Deno.test(rootTest(
  "a data root on a read-only file system: the write is named with the path and the reason",
  !BWRAP,
  async (root) => {
    const ro = ["--ro-bind", root, root];
    const add = await runUnder(ro, modelAddArgs(root, "deepseek", "deepseek-v4-flash"));
    assertUserFailure(
      add,
      1,
      /^penguin: Cannot (write|create the directory) ".*": the file system is read-only\n$/,
    );
    const mcp = await runUnder(ro, mcpAddArgs(root, "x", "--no-test", "--", "echo"));
    assertUserFailure(
      mcp,
      1,
      /Cannot (create the directory|open) ".*(agent_state|default_agent|\.import\.lock)": the file system is read-only/,
    );
  },
));

Deno.test({
  name: "a full traces directory ends the run with one line naming the trace file",
  ignore: !BWRAP,
  fn: async () => {
    await withModelRoot({ turns: [turn.text("x".repeat(20000))] }, async (sb) => {
      const traces = join(sb.root, "default_project", "agents", "default_agent", "traces");
      await Deno.mkdir(traces, { recursive: true });
      const r = await runUnder(
        ["--size", "4096", "--tmpfs", traces],
        inRoot(sb, "run", "-m", "hi"),
      );
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        r.stderr,
        /Cannot append to trace ".*traces\/.*\.jsonl": No space left on device/,
      );
      assert.match(r.stderr, /was stopped so that nothing runs unrecorded/);
      assertUserError(r);
    });
  },
});

Deno.test("broken MCP server entries: each skipped one names file:line, the entry and the problem in words", async () => {
  await withRoot(async (root) => {
    assert.equal(
      (await runCli(["--root", root, "mcp", "add", "ok", "--no-test", "--", "true"])).code,
      0,
    );
    const yaml = join(root, "default_project/agents/default_agent/agent_state/system_config.yaml");
    const text = await Deno.readTextFile(yaml);
    const broken = text.replace(
      / {2}mcpServers:[^\n]*(\n {4}[^\n]*)*/,
      "  mcpServers:\n    - config: { command: echo }\n    - name: num\n      config: { command: 5 }",
    );
    assert.notEqual(broken, text, "the test rewrote tools.mcpServers");
    await Deno.writeTextFile(yaml, broken);
    const r = await runCli(["--root", root, "mcp", "list"]);
    assert.equal(r.code, 0, r.stderr);
    const lines = broken.split("\n");
    const first = lines.indexOf("    - config: { command: echo }") + 1;
    const second = lines.indexOf("    - name: num") + 1;
    assert.ok(first > 0 && second === first + 1);
    assert.ok(
      r.stderr.includes(
        `system_config.yaml:${first}: tools.mcpServers[0]: no name (give the entry a name`,
      ),
      r.stderr,
    );
    assert.ok(
      r.stderr.includes(
        `system_config.yaml:${second}: tools.mcpServers[1]: num: config.command: expected a non-empty command`,
      ),
      r.stderr,
    );
    assert.doesNotMatch(r.stderr, /Invalid input|null/);
    assertUserError(r);
  });
});

Deno.test("a penguin.jsonc syntax error is named in words with its line", async () => {
  await withRoot(async (dir) => {
    const ws = join(dir, "ws");
    await Deno.mkdir(ws);
    await Deno.writeTextFile(join(ws, "penguin.jsonc"), '{ "sandbox":\n');
    const r = await runCli([
      "--root",
      join(dir, "data"),
      "sandbox",
      "run",
      "--workspace",
      ws,
      "--",
      "true",
    ]);
    assertUserFailure(
      r,
      2,
      /Invalid ".*penguin\.jsonc": line 2, column 1: syntax error: value expected/,
    );
  });
});

Deno.test("a mistyped flag value gets the nearest accepted value as a suggestion", async () => {
  await withRoot(async (root) => {
    const cases: Array<[string[], RegExp]> = [
      [
        ["run", "-m", "hi", "--thinking", "hgh"],
        /--thinking must be one of .*; did you mean "high"\?/,
      ],
      [["run", "-m", "hi", "--approve", "alway-ask"], /; did you mean "always-ask"\?/],
      [
        ["chat", "--sandbox", "readonly"],
        /--sandbox must be one of .*; did you mean "read-only"\?/,
      ],
      [["sessions", "import", "--from", "codx", "x.jsonl"], /; did you mean "codex"\?/],
      [["trace", "stats", "--by", "dya"], /--by must be one of .*; did you mean "day"\?/],
      [["trace", "export", "x", "--format", "htm"], /--format must be .*; did you mean "html"\?/],
    ];
    for (const [args, re] of cases) {
      const r = await runCli(["--root", root, ...args]);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, re, args.join(" "));
      assertUserError(r);
    }
    const far = await runCli(["--root", root, "run", "-m", "hi", "--thinking", "zzzzzz"]);
    assert.doesNotMatch(far.stderr, /did you mean/, "nothing close: no suggestion");
  });
});

Deno.test("sessions list of an agent that does not exist says so on stderr and names the agents that do", async () => {
  await withRoot(async (root) => {
    assert.equal(
      (await runCli([
        "--root",
        root,
        "mcp",
        "add",
        "x",
        "--no-test",
        "--agent-id",
        "reviewer",
        "--",
        "true",
      ]))
        .code,
      0,
    );
    const r = await runCli(["--root", root, "sessions", "list", "--agent-id", "reviewr"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "No sessions.\n");
    assert.match(
      r.stderr,
      /agent reviewr does not exist in project default_project \(.*agents: reviewer\); did you mean "reviewer"\?/,
    );
    const known = await runCli(["--root", root, "sessions", "list", "--agent-id", "reviewer"]);
    assert.equal(known.stderr, "");
    const fresh = await runCli(["--root", root, "sessions", "list"]);
    assert.equal(fresh.stderr, "", "the default agent of a fresh root is no news");
  });
});

Deno.test("a directory or a file that is not a trace, where trace files are expected, is named as such", async () => {
  await withRoot(async (dir) => {
    const empty = join(dir, "empty");
    await Deno.mkdir(empty);
    const garbage = join(dir, "notes.jsonl");
    await Deno.writeTextFile(garbage, "not json\nstill not json\n");
    const root = join(dir, "data");

    const imp = await runCli(["--root", root, "sessions", "import", empty]);
    assert.equal(imp.code, 1, imp.stderr);
    assert.match(
      imp.stderr,
      /empty: a directory, not a trace file \(give the files in it: .*empty\/\*\.jsonl\)/,
    );
    assert.doesNotMatch(imp.stderr, /os error/);

    const stats = await runCli(["trace", "stats", empty]);
    assert.equal(stats.code, 1, stats.stderr);
    assert.match(stats.stderr, /trace stats: no trace files found in ".*empty"/);
    assert.equal(stats.stdout, "");

    const exp = await runCli(["trace", "export", garbage, "--format", "md"]);
    assert.equal(exp.code, 1, exp.stderr);
    assert.match(
      exp.stderr,
      /nothing to export from ".*notes\.jsonl": all 2 line\(s\) are malformed/,
    );
    assert.equal(exp.stdout, "");
    assertUserError(exp);
  });
});

Deno.test(rootTest(
  "agent snapshot onto a full file system names the archive and the reason, and leaves nothing",
  !BWRAP,
  async (root) => {
    await runCliOk(mcpAddArgs(root, "x", "--no-test", "--", "true"));
    const agent = join(root, "default_project", "agents", "default_agent");
    const noise = crypto.getRandomValues(new Uint8Array(60000));
    await Deno.writeFile(join(agent, "agent_state", "data.bin"), noise);
    const snapshots = join(agent, "snapshots");
    await Deno.mkdir(snapshots);
    const tmpfs = ["--size", "8192", "--tmpfs", snapshots];
    const r = await runUnder(tmpfs, ["--root", root, "agent", "snapshot"]);
    assertUserFailure(
      r,
      1,
      /^penguin: Cannot write the snapshot ".*snapshots\/v1\.tar\.gz": no space left on the device\n$/,
    );
  },
));

Deno.test(rootTest(
  "skills install, agent import and memory clear on a read-only data root name the path and the reason",
  !BWRAP,
  async (dir) => {
    const root = join(dir, "data");
    await runCliOk(mcpAddArgs(root, "x", "--no-test", "--", "true"));
    assert.equal((await runCli(["--root", root, "agent", "snapshot"])).code, 0);
    assert.equal((await runCli(["--root", root, "memory", "list"])).code, 0);
    const skill = join(dir, "sk");
    await Deno.mkdir(skill);
    await Deno.writeTextFile(join(skill, "SKILL.md"), "---\nname: sk\ndescription: d\n---\nhi\n");
    const snapshot = join(root, "default_project/agents/default_agent/snapshots/v1.tar.gz");
    const ro = ["--ro-bind", root, root];
    const cases: Array<[string[], RegExp]> = [
      [
        ["skills", "install", skill],
        /Cannot create the directory ".*agent_state\/\.skill-install-[^"]*"/,
      ],
      [
        ["agent", "import", snapshot, "--yes"],
        /Cannot (create the directory|open) ".*default_agent\/[^"]*"/,
      ],
      [["memory", "clear", "--yes"], /Cannot remove ".*memory\/user\/MEMORY\.md"/],
    ];
    for (const [args, re] of cases) {
      const r = await runUnder(ro, ["--root", root, ...args]);
      assert.equal(r.code, 1, `${args[0]}: ${r.stderr}`);
      assert.match(r.stderr, re, args[0]);
      assert.match(r.stderr, /: the file system is read-only\n$/, args[0]);
      assertUserError(r);
    }
  },
));

Deno.test("a --workspace that does not exist or is a file is a usage error for sandbox run and mcp list/test", async () => {
  await withRoot(async (dir) => {
    const root = join(dir, "data");
    const missing = join(dir, "nope");
    const file = join(dir, "file");
    await Deno.writeTextFile(file, "");
    await runCliOk(mcpAddArgs(root, "x", "--no-test", "--", "true"));
    const cases: Array<[string[], RegExp]> = [
      [
        ["sandbox", "run", "--workspace", missing, "--", "true"],
        /sandbox run: the workspace does not exist: .*nope/,
      ],
      [["mcp", "list", "--workspace", missing], /mcp list: the workspace does not exist: .*nope/],
      [
        ["mcp", "test", "x", "--workspace", file],
        /mcp test: the workspace is not a directory: .*file/,
      ],
    ];
    for (const [args, re] of cases) {
      const r = await runCli(["--root", root, ...args]);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, re);
      assertUserError(r);
    }
  });
});

Deno.test("config model add refuses a base URL that is not http(s) before writing anything", async () => {
  await withRoot(async (root) => {
    const add = (url: string) => runCli(modelAddArgs(root, "custom", "m", "--base-url", url));
    for (const url of ["notaurl", "ftp://example.com/v1", "localhost:8080"]) {
      const r = await add(url);
      assertUserFailure(r, 2, /--base-url must be an http:\/\/ or https:\/\/ URL .*, got "/);
    }
    await assert.rejects(Deno.stat(join(root, "default_project", ".project_config.toml")));
    assert.equal((await add("http://127.0.0.1:9/v1")).code, 0);
  });
});

Deno.test("a mistyped chat command gets the nearest one as a suggestion", async () => {
  await withModelRoot({ turns: [] }, async (sb) => {
    const r = await runCli(["--root", sb.root, "chat", "--workspace", sb.workspace], {
      stdin: "/skil release-notes\n/thinkng high\n",
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /\[error\] Unknown command \/skil; did you mean "\/skill"\? \/help lists the commands\./,
    );
    assert.match(r.stdout, /\[error\] Unknown command \/thinkng; did you mean "\/thinking"\?/);
  });
});
