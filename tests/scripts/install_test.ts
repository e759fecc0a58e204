// `deno task install` / `deno task uninstall` as a user runs them: a subprocess
// with a temp DENO_INSTALL_ROOT and a temp HOME, then the installed `penguin`
// run from an unrelated directory.
import assert from "node:assert/strict";
import { join } from "node:path";
import { MARKER, taskFlags } from "../../scripts/install.ts";
import { type CliResult, denoDir, modelAddArgs, REPO, runText } from "../support/cli.ts";
import { visibleTempDir } from "../support/roots.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";

/** `cmd args` in `opts.cwd` with only the environment `opts.env`. */
function run(
  cmd: string,
  args: string[],
  opts: { cwd: string; env: Record<string, string> },
): Promise<CliResult> {
  return runText(cmd, { args, cwd: opts.cwd, env: opts.env, clearEnv: true });
}

/** A fresh user: HOME and DENO_INSTALL_ROOT in `base`, Deno's module cache kept (no downloads). */
function userEnv(base: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOME: join(base, "home"),
    DENO_INSTALL_ROOT: join(base, "deno-root"),
    DENO_DIR: denoDir(),
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    NO_COLOR: "1",
    ...extra,
  };
}

/** `deno task <args>` in the checkout, as a user types it. */
function task(
  base: string,
  args: string[],
  extra: Record<string, string> = {},
): Promise<CliResult> {
  return run(Deno.execPath(), ["task", ...args], { cwd: REPO, env: userEnv(base, extra) });
}

/** stderr without the `Task <name> …` line `deno task` itself prints. */
function ownLines(stderr: string): string[] {
  return stderr.split("\n").filter((l) => l !== "" && !/^Task (un)?install /.test(l));
}

async function withBase(fn: (base: string) => Promise<void>): Promise<void> {
  const base = await visibleTempDir("penguin-install-test-");
  try {
    await Deno.mkdir(join(base, "home"));
    await fn(base);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
}

Deno.test("deno task install puts a penguin on DENO_INSTALL_ROOT/bin that runs from any directory; uninstall removes it", async () => {
  await withBase(async (base) => {
    const inst = await task(base, ["install"]);
    assert.equal(inst.code, 0, inst.stderr);
    const bin = join(base, "deno-root", "bin");
    const penguin = join(bin, "penguin");
    assert.match(inst.stdout, new RegExp(`^Installed ${penguin}$`, "m"));
    assert.match(inst.stdout, new RegExp(`export PATH="${bin}:\\$PATH"`), "says how to reach it");
    const text = await Deno.readTextFile(penguin);
    assert.equal(text.split("\n")[1], MARKER);
    // The flags are the ones of deno.json's penguin task, read from there.
    const flags = taskFlags(await Deno.readTextFile(join(REPO, "deno.json")));
    assert.ok(flags.includes("-P=penguin"));
    assert.ok(flags.some((f) => f.startsWith("--v8-flags=")));
    for (const f of flags) assert.ok(text.includes(`'${f}'`), `launcher passes ${f}`);

    const cwd = join(base, "elsewhere");
    await Deno.mkdir(cwd);
    const env = userEnv(base, { PATH: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}` });

    const version = await run("penguin", ["--version"], { cwd, env });
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, /^penguin \d+\.\d+\.\d+/);
    assert.equal(version.stderr, "");
    assert.doesNotMatch(version.stdout, /^Task /m);

    const demo = await run("penguin", ["demo"], { cwd, env });
    assert.equal(demo.code, 0, demo.stderr);
    assert.match(demo.stdout, /Done: `cat hello\.txt` printed/);
    assert.doesNotMatch(demo.stdout + demo.stderr, /^Task /m);

    // A run with no --workspace works in the directory it is started from.
    const server = await startModelServer({
      turns: [
        turn.of(item.toolCall("write_file", { file_path: "made-here.txt", content: "here\n" })),
        turn.text("done"),
      ],
    });
    try {
      const root = join(base, "data");
      const add = await run(
        "penguin",
        modelAddArgs(
          root,
          "custom",
          "m",
          "--base-url",
          server.baseUrl("openai-chat"),
          "--client-type",
          "openai-chat",
          "--set-default",
        ),
        { cwd, env },
      );
      assert.equal(add.code, 0, add.stderr);
      const r = await run("penguin", ["--root", root, "run", "-m", "write it"], { cwd, env });
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout + r.stderr, /^Task /m);
      assert.equal(await Deno.readTextFile(join(cwd, "made-here.txt")), "here\n");
    } finally {
      await server.close();
    }

    const un = await task(base, ["uninstall"]);
    assert.equal(un.code, 0, un.stderr);
    assert.match(un.stdout, new RegExp(`^Removed ${penguin}$`, "m"));
    await assert.rejects(Deno.stat(penguin), Deno.errors.NotFound);
    const again = await task(base, ["uninstall"]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /not installed/);
  });
});

Deno.test("deno task install into a root it cannot write fails with one line", async () => {
  await withBase(async (base) => {
    const file = join(base, "a-file");
    await Deno.writeTextFile(file, "");
    const r = await task(base, ["install"], { DENO_INSTALL_ROOT: join(file, "root") });
    assert.equal(r.code, 1, r.stdout);
    const lines = ownLines(r.stderr);
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, new RegExp(`^install: cannot create the install directory ${file}/`));
  });
});

Deno.test("deno task install and uninstall leave a penguin they did not write alone", async () => {
  await withBase(async (base) => {
    const bin = join(base, "deno-root", "bin");
    await Deno.mkdir(bin, { recursive: true });
    await Deno.writeTextFile(join(bin, "penguin"), "#!/bin/sh\necho someone else's\n");
    const r = await task(base, ["install"]);
    assert.equal(r.code, 1);
    assert.deepEqual(ownLines(r.stderr).length, 1, r.stderr);
    assert.match(r.stderr, /not written by penguin's installer; remove it or pass --force/);
    const u = await task(base, ["uninstall"]);
    assert.equal(u.code, 1);
    assert.equal(ownLines(u.stderr).length, 1, u.stderr);
    assert.equal(
      await Deno.readTextFile(join(bin, "penguin")),
      "#!/bin/sh\necho someone else's\n",
    );
    const forced = await task(base, ["install", "--force"]);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal((await Deno.readTextFile(join(bin, "penguin"))).split("\n")[1], MARKER);
  });
});

Deno.test("the installed penguin says in one line when its Deno is gone", async () => {
  await withBase(async (base) => {
    const denoLink = join(base, "deno-bin", "deno");
    await Deno.mkdir(join(base, "deno-bin"));
    await Deno.symlink(Deno.execPath(), denoLink);
    const inst = await task(base, ["install", "--deno", denoLink]);
    assert.equal(inst.code, 0, inst.stderr);
    const penguin = join(base, "deno-root", "bin", "penguin");
    const empty = join(base, "empty");
    await Deno.mkdir(empty);
    const env = userEnv(base, { PATH: empty });
    const ok = await run(penguin, ["--version"], { cwd: empty, env });
    assert.equal(ok.code, 0, ok.stderr);
    await Deno.remove(denoLink);
    const gone = await run(penguin, ["--version"], { cwd: empty, env });
    assert.equal(gone.code, 127);
    assert.equal(gone.stdout, "");
    const lines = gone.stderr.split("\n").filter((l) => l !== "");
    assert.equal(lines.length, 1, gone.stderr);
    assert.match(lines[0]!, new RegExp(`^penguin: Deno is missing: ${denoLink} is gone`));
  });
});
