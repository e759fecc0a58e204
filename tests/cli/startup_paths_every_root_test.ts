// What the host's shell and git reach, kept from the model wherever it lies (issue 26 items 2
// and 4, attack pass final9 F31, F27, F11): real `penguin run`s against the scripted model.
// - F31: a sealed home's `~/.bashrc -> proj/dotfiles/bashrc`, `proj/dotfiles` a link in a
//   writable directory: the model cannot re-point it; the same link lying directly in a workspace
//   outside the home is refused by name.
// - F27: `~/.bashrc` activates a venv in the agent's shared_env (a writable root other than the
//   workspace): neither a command nor write_file changes `activate`.
// - F11: `[includeIf "gitdir:~/work/"]` includes a file setting `core.hooksPath` to a directory
//   outside the home and the workspace; the workspace holds a hard link of its `pre-commit`:
//   neither a command nor write_file changes the hook.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item } from "../support/model_server.ts";
import { outputsOf, runCalls, runRefused, withHomeBase } from "../support/home_run.ts";
import { useTestRunDir } from "../support/run_dir.ts";

useTestRunDir();

Deno.test("run: a sealed home's link on the way to ~/.bashrc itself cannot be re-pointed", async () => {
  await withHomeBase("penguin-rc-own-link-", async ({ root, home }) => {
    await Deno.mkdir(join(home, "proj", "df-v2"), { recursive: true });
    await Deno.writeTextFile(join(home, "proj", "df-v2", "bashrc"), "export RC=1\n");
    await Deno.symlink("df-v2", join(home, "proj", "dotfiles"));
    await Deno.symlink("proj/dotfiles/bashrc", join(home, ".bashrc"));
    const body = await runCalls({ root, home, ws: home, flags: ["--allow-home-workspace"] }, [
      item.toolCall("exec_command", {
        // The words echoed are split in the command, so only its output holds them whole.
        cmd: "cd ~/proj; mkdir -p evil; echo 'touch /tmp/pwned' > evil/bashrc; " +
          "ln -sfn evil dotfiles && echo re''linked; rm dotfiles && echo re''moved; " +
          "mv dotfiles d2 && echo mo''ved; echo tr''ied",
      }, { id: "c1" }),
    ]);
    const shown = outputsOf(body)["c1"] ?? "";
    assert.ok(shown.includes("tried"), shown);
    for (const w of ["relinked", "removed", "moved"]) assert.ok(!shown.includes(w), shown);
    assert.equal(await Deno.readLink(join(home, "proj", "dotfiles")), "df-v2");
    assert.equal(await Deno.readTextFile(join(home, ".bashrc")), "export RC=1\n");
  });
});

Deno.test("run: a link directly in the workspace on the way to ~/.bashrc itself is refused by name", async () => {
  await withHomeBase("penguin-rc-own-root-link-", async ({ base, root, home }) => {
    const ws = join(base, "dotfiles");
    await Deno.mkdir(join(ws, "v2"), { recursive: true });
    await Deno.writeTextFile(join(ws, "v2", "bashrc"), "export RC=1\n");
    await Deno.symlink("v2", join(ws, "current"));
    await Deno.symlink(join(ws, "current", "bashrc"), join(home, ".bashrc"));
    const stderr = await runRefused({ root, home, ws });
    assert.ok(stderr.includes(`startup file "${join(home, ".bashrc")}"`), stderr);
    assert.ok(stderr.includes(`symbolic link "${join(ws, "current")}"`), stderr);
    assert.ok(stderr.includes("real path"), stderr);
  });
});

Deno.test("run: a file ~/.bashrc sources in the agent's shared_env is read-only to commands and file tools", async () => {
  await withHomeBase("penguin-rc-shared-env-", async (run) => {
    const bin = join(
      run.root,
      "default_project",
      "agents",
      "default_agent",
      "shared_env",
      "py",
      "bin",
    );
    const activate = join(bin, "activate");
    await Deno.mkdir(bin, { recursive: true });
    await Deno.writeTextFile(activate, "export VIRTUAL_ENV=x\n");
    await Deno.writeTextFile(join(run.home, ".bashrc"), `. ${activate}\n`);
    // A file of shared_env no startup file names stays the model's to write.
    const other = join(bin, "other.sh");
    await Deno.writeTextFile(other, "x\n");
    const out = outputsOf(
      await runCalls(run, [
        item.toolCall("exec_command", {
          cmd: `(echo 'touch /tmp/pwned' >> '${activate}') 2>&1 && echo app''ended; ` +
            `echo y > '${other}' && echo oth''er; echo tr''ied`,
        }, { id: "c1" }),
        item.toolCall("write_file", { file_path: activate, content: "touch /tmp/pwned\n" }, {
          id: "w1",
        }),
      ]),
    );
    assert.ok(out["c1"]?.includes("tried"), JSON.stringify(out));
    assert.ok(!out["c1"]!.includes("appended"), out["c1"]);
    assert.ok(out["c1"]!.includes("other"), out["c1"]);
    // The confined tool worker meets the read-only mount: the write fails, nothing changes.
    assert.match(out["w1"] ?? "", /Refusing to write|Failed to write/);
    assert.equal(await Deno.readTextFile(activate), "export VIRTUAL_ENV=x\n");
    assert.equal(await Deno.readTextFile(other), "y\n");
  });
});

Deno.test("run: a hook of a hooksPath set through a non-matching includeIf keeps its workspace hard link read-only", async () => {
  await withHomeBase("penguin-includeif-hook-", async (run) => {
    const { base, home, ws } = run;
    const hooks = join(base, "company-hooks");
    const hook = join(hooks, "pre-commit");
    const text = "#!/bin/sh\necho company hook\n";
    await Deno.mkdir(join(home, "work"), { recursive: true });
    await Deno.mkdir(hooks, { recursive: true });
    await Deno.writeTextFile(hook, text, { mode: 0o755 });
    await Deno.writeTextFile(
      join(home, ".gitconfig"),
      '[user]\n\tname = U\n\temail = u@x\n[includeIf "gitdir:~/work/"]\n\tpath = ~/.gitconfig-work\n',
    );
    await Deno.writeTextFile(join(home, ".gitconfig-work"), `[core]\n\thooksPath = ${hooks}\n`);
    await Deno.link(hook, join(ws, "pre-commit"));
    const out = outputsOf(
      await runCalls(run, [
        item.toolCall("exec_command", {
          cmd: "(echo 'touch /tmp/pwned' >> pre-commit) 2>&1 && echo wr''ote; echo tr''ied",
        }, { id: "c1" }),
        item.toolCall("write_file", { file_path: "pre-commit", content: "touch /tmp/pwned\n" }, {
          id: "w1",
        }),
      ]),
    );
    assert.ok(out["c1"]?.includes("tried"), JSON.stringify(out));
    assert.ok(!out["c1"]!.includes("wrote"), out["c1"]);
    assert.match(out["w1"] ?? "", /Refusing to write.*another name \(a hard link\)/s);
    assert.equal(await Deno.readTextFile(hook), text);
    assert.equal((await Deno.stat(hook)).nlink, 2);
  });
});
