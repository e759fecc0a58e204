// Every key of GIT_EXEC_KEYS, one step each: the repository's config points
// the key at a file of the workspace, a real sandboxed command tries to
// overwrite (or remove and recreate) it and write_file tries to replace it;
// the user's file is intact afterwards and the refusal names the key. Then the
// issue's attacks end to end: a husky hook run by the host's `git commit`, and
// an included config whose fsmonitor the host's `git status` would run.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, type GitAccess, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { commandWords, GIT_EXEC_KEYS } from "../../lib/sandbox/git_exec_keys.ts";
import { createWriteFileTool, DEFAULT_TOOL_DEFINITIONS } from "../../lib/tools/mod.ts";
import { confinedFileTools } from "../../lib/tools/worker/mod.ts";
import { run } from "../tools/_support.ts";
import { hostRun } from "../support/host_git.ts";
import { collect, exists } from "./_helpers.ts";
import { type Repo, withRepoDirs } from "./_git_repo.ts";

/** The user's git on the host in the workspace. */
function hostGit(r: Repo, args: string[]): Promise<{ code: number; out: string }> {
  return hostRun(r.home, r.ws, "git", args);
}

function withRepo(fn: (r: Repo) => Promise<void>): Promise<void> {
  return withRepoDirs("penguin-git-keys-", async (r) => {
    assert.equal((await hostGit(r, ["init", "-q", "-b", "main"])).code, 0);
    await fn(r);
  });
}

const policyOf = (r: Repo, git: GitAccess) =>
  createPolicy({
    workspace: r.ws,
    mode: "workspace-write",
    home: r.home,
    hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: r.home },
    git,
  });

async function sh(r: Repo, shell: string, git: GitAccess = "read-only") {
  const policy = policyOf(r, git);
  return await collect(await spawnSandboxed({ shell, policy, stdin: "null" }));
}

const writeFile = (r: Repo, file_path: string, git: GitAccess) =>
  run(
    createWriteFileTool(DEFAULT_TOOL_DEFINITIONS.find((d) => d.name === "write_file")!),
    { file_path, content: "PWNED\n" },
    { ws: r.ws },
    { ctx: { sandbox: policyOf(r, git) } },
  );

/** A concrete key for a table pattern (`diff.*.textconv` → `diff.k3.textconv`). */
function concrete(pattern: string, i: number): string {
  return pattern.replace("*cmd", "tocmd").replaceAll("*", `k${i}`);
}

/** The config text that sets `key` (`section[.sub].name`) to `value`. */
function configLine(key: string, value: string): string {
  const parts = key.split(".");
  const name = parts.pop()!;
  const section = parts.shift()!;
  const head = parts.length > 0 ? `[${section} "${parts.join(".")}"]` : `[${section}]`;
  return `${head}\n\t${name} = ${value.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}\n`;
}

/** The workspace file (relative) the key's row is pointed at, and the value that names it. */
function pointAt(row: (typeof GIT_EXEC_KEYS)[number], i: number): { rel: string; value: string } {
  switch (row.kind) {
    case "hooks":
    case "dir":
      return { rel: `t${i}/dir/pre-commit`, value: `t${i}/dir` };
    case "file":
      return { rel: `t${i}/file`, value: `t${i}/file` };
    default: {
      // alias.* and submodule.*.update run a command when it starts with "!".
      const cmd = `./t${i}/prog --flag`;
      const bang = row.key === "alias.*" || row.key === "submodule.*.update";
      // A remote's URL runs a command through the ext:: transport.
      const ext = row.key.endsWith(".url") || row.key.endsWith(".pushurl");
      return { rel: `t${i}/prog`, value: bang ? `!${cmd}` : ext ? `ext::${cmd}` : cmd };
    }
  }
}

for (const git of ["read-only", "writable"] as const) {
  Deno.test(`(${git} git) every key of the table: what it names is read-only to the model`, async (t) => {
    await withRepo(async (r) => {
      const rows = GIT_EXEC_KEYS.map((row, i) => ({ row, i, ...pointAt(row, i) }))
        .filter((x) => x.row.key !== "core.worktree" && x.row.kind !== "setting");
      let config = "";
      for (const x of rows) {
        config += configLine(concrete(x.row.key, x.i), x.value);
        await Deno.mkdir(join(r.ws, x.rel, ".."), { recursive: true });
        await Deno.writeTextFile(join(r.ws, x.rel), "USER\n");
      }
      await Deno.writeTextFile(join(r.ws, ".git", "config"), config);
      for (const x of rows) {
        await t.step(`${x.row.key} = ${x.value}`, async () => {
          const dir = x.rel.split("/")[0]!;
          await sh(
            r,
            `echo PWNED > ${x.rel}; rm -rf ${x.rel}; mv ${dir} ${dir}.old; ` +
              `mkdir -p ${join(x.rel, "..")}; echo PWNED > ${x.rel}`,
            git,
          );
          assert.equal(await Deno.readTextFile(join(r.ws, x.rel)), "USER\n");
          assert.equal(await exists(join(r.ws, `${dir}.old`)), false);
          const w = await writeFile(r, x.rel, git);
          assert.equal(w.status, "failed");
          assert.ok(w.output.includes(`(${x.row.key} = `), w.output);
          assert.equal(await Deno.readTextFile(join(r.ws, x.rel)), "USER\n");
        });
      }
    });
  });
}

Deno.test("core.worktree: relative paths are also taken from the work tree it names", async () => {
  await withRepo(async (r) => {
    await Deno.mkdir(join(r.ws, "sub", "hooks"), { recursive: true });
    await Deno.writeTextFile(join(r.ws, "sub", "hooks", "pre-commit"), "USER\n");
    await Deno.writeTextFile(
      join(r.ws, ".git", "config"),
      "[core]\n\tworktree = ../sub\n\thooksPath = hooks\n",
    );
    await sh(r, "echo PWNED > sub/hooks/pre-commit");
    assert.equal(await Deno.readTextFile(join(r.ws, "sub", "hooks", "pre-commit")), "USER\n");
  });
});

const hook = (marker: string) => `#!/bin/sh\ntouch ${marker}\n`;

for (const git of ["read-only", "writable"] as const) {
  Deno.test(`(${git} git) core.hooksPath=.husky: a missing .husky cannot be created, an existing one not changed, the user's hook still runs`, async () => {
    await withRepo(async (r) => {
      await Deno.writeTextFile(join(r.ws, ".git", "config"), "[core]\n\thooksPath = .husky\n");
      const plant = `mkdir -p .husky; printf '${hook(r.marker).replaceAll("\n", "\\n")}' > ` +
        `.husky/pre-commit; chmod +x .husky/pre-commit`;
      await sh(r, plant, git);
      assert.equal(
        await exists(join(r.ws, ".husky")),
        false,
        "the stand-in is gone, nothing planted",
      );
      const c = await hostGit(r, ["commit", "-q", "--allow-empty", "-m", "x"]);
      assert.equal(c.code, 0, c.out);
      assert.equal(await exists(r.marker), false, "the planted hook ran on the host");

      // The user's own hook: read-only to the model, and the host's git still runs it.
      const userMark = join(r.base, "user-hook-ran");
      await Deno.mkdir(join(r.ws, ".husky"));
      await Deno.writeTextFile(join(r.ws, ".husky", "pre-commit"), hook(userMark), { mode: 0o755 });
      await sh(r, plant, git);
      assert.equal(await Deno.readTextFile(join(r.ws, ".husky", "pre-commit")), hook(userMark));
      await hostGit(r, ["commit", "-q", "--allow-empty", "-m", "y"]);
      assert.equal(await exists(r.marker), false, "the planted hook ran on the host");
      assert.equal(await exists(userMark), true, "the user's own hook runs");
    });
  });

  Deno.test(`(${git} git) include.path=../shared.gitconfig: an armed include never reaches host git status`, async () => {
    await withRepo(async (r) => {
      await Deno.writeTextFile(
        join(r.ws, ".git", "config"),
        "[include]\n\tpath = ../shared.gitconfig\n",
      );
      const arm =
        `printf '[core]\\n\\tfsmonitor = "touch ${r.marker}; false"\\n' > shared.gitconfig`;
      // Missing include: cannot be created.
      await sh(r, arm, git);
      assert.equal(await exists(join(r.ws, "shared.gitconfig")), false);
      await hostGit(r, ["status"]);
      assert.equal(await exists(r.marker), false);
      // Existing include: cannot be changed.
      await Deno.writeTextFile(join(r.ws, "shared.gitconfig"), "[user]\n\tname = u\n");
      await sh(r, `${arm}; mv shared.gitconfig x.gitconfig`, git);
      assert.equal(await Deno.readTextFile(join(r.ws, "shared.gitconfig")), "[user]\n\tname = u\n");
      await hostGit(r, ["status"]);
      assert.equal(await exists(r.marker), false);
    });
  });
}

Deno.test("the confined file-tool worker refuses what an include outside its reach names", async () => {
  // The worker reads only the workspace; penguin resolves the configuration for it.
  await withRepo(async (r) => {
    await Deno.writeTextFile(join(r.base, "outside.gitconfig"), "[core]\n\thooksPath = .husky\n");
    await Deno.writeTextFile(
      join(r.ws, ".git", "config"),
      "[include]\n\tpath = ../../outside.gitconfig\n",
    );
    const confined = confinedFileTools();
    try {
      const def = DEFAULT_TOOL_DEFINITIONS.find((d) => d.name === "write_file")!;
      const w = await run(
        confined.factories["write_file"]!(def),
        { file_path: ".husky/pre-commit", content: "#!/bin/sh\n" },
        { ws: r.ws },
        { ctx: { sandbox: { ...policyOf(r, "read-only"), mode: "off" } } },
      );
      assert.equal(w.status, "failed");
      assert.match(w.output, /\.husky\/pre-commit is run by git \(core\.hooksPath = \.husky\)/);
      assert.equal(await exists(join(r.ws, ".husky")), false);
    } finally {
      await confined.dispose();
    }
  });
});

Deno.test("a bare command word counts when it names a workspace file, and a link there stops nothing", async () => {
  await withRepo(async (r) => {
    await Deno.writeTextFile(join(r.ws, "fsmon"), "USER\n");
    await Deno.symlink("/bin/true", join(r.ws, "less"));
    await Deno.writeTextFile(
      join(r.ws, ".git", "config"),
      "[core]\n\tfsmonitor = fsmon --quiet\n\tpager = less -R\n",
    );
    const out = await sh(r, "echo PWNED > fsmon; echo ran");
    assert.match(out.out, /ran/);
    assert.equal(await Deno.readTextFile(join(r.ws, "fsmon")), "USER\n");
  });
});

Deno.test("(read-only git) an onbranch: include for another branch cannot be planted: the user may switch", async () => {
  // Issue 26 attempt 06: HEAD is main; the user later runs `git switch -c feature/x`.
  await withRepo(async (r) => {
    await Deno.writeTextFile(
      join(r.ws, ".git", "config"),
      `[includeIf "onbranch:feature/"]\n\tpath = ../feature.gitconfig\n`,
    );
    await sh(
      r,
      `printf '[core]\\n\\tfsmonitor = "touch ${r.marker}; false"\\n' > feature.gitconfig`,
    );
    assert.equal(await exists(join(r.ws, "feature.gitconfig")), false);
    const w = await writeFile(r, "feature.gitconfig", "read-only");
    assert.equal(w.status, "failed");
    assert.match(w.output, /read by git \(includeIf\.\*\.path/);
    await hostGit(r, ["switch", "-q", "-c", "feature/x"]);
    await hostGit(r, ["status"]);
    assert.equal(await exists(r.marker), false);
  });
});

Deno.test("commandWords reads $HOME and ${HOME} at a word's start as ~ (round 32 w06)", () => {
  assert.deepEqual(commandWords("sh -c $HOME/proj/conv.sh --x=${HOME}/a $PWD/b"), [
    "sh",
    "~/proj/conv.sh",
    "~/a",
  ]);
});
