// A logout or fish startup file that the home links into the workspace (a dotfiles repository):
// read-only to the model's commands like a linked `.bashrc` (issue 26, red team X22, X24), while the
// repository's other files stay writable.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { useTestRunDir } from "../support/run_dir.ts";
import { collect, visibleTempDir } from "./_helpers.ts";

Deno.test("a .bash_logout, fish config.fish or .inputrc the home links into the workspace is read-only", async () => {
  useTestRunDir();
  const base = await visibleTempDir("penguin-linked-other-");
  try {
    const home = join(base, "home");
    const ws = join(base, "dotfiles");
    await Deno.mkdir(join(ws, "shell"), { recursive: true });
    await Deno.mkdir(join(home, ".config", "fish"), { recursive: true });
    await Deno.writeTextFile(join(ws, "shell", "logout"), "# logout\n");
    await Deno.writeTextFile(join(ws, "shell", "config.fish"), "# fish\n");
    await Deno.writeTextFile(join(ws, "shell", "inputrc"), "# readline\n");
    await Deno.symlink(join(ws, "shell", "inputrc"), join(home, ".inputrc"));
    await Deno.symlink(join(ws, "shell", "logout"), join(home, ".bash_logout"));
    await Deno.symlink(
      join(ws, "shell", "config.fish"),
      join(home, ".config", "fish", "config.fish"),
    );
    const policy = createPolicy({
      workspace: ws,
      home,
      hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home },
    });
    const shell =
      "for f in logout config.fish inputrc other; do echo evil >> shell/$f; done; echo end";
    const out = (await collect(await spawnSandboxed({ shell, policy, stdin: "null" }))).out;
    assert.match(out, /end/);
    assert.equal(await Deno.readTextFile(join(ws, "shell", "logout")), "# logout\n");
    assert.equal(await Deno.readTextFile(join(ws, "shell", "config.fish")), "# fish\n");
    assert.equal(await Deno.readTextFile(join(ws, "shell", "inputrc")), "# readline\n");
    assert.equal(await Deno.readTextFile(join(ws, "shell", "other")), "evil\n");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("an editor's, debugger's or multiplexer's startup file the home links into the workspace is read-only", async () => {
  // Attack round 24 concgit c08a: each runs commands when the user next starts the program.
  useTestRunDir();
  const base = await visibleTempDir("penguin-linked-rc-");
  try {
    const home = join(base, "home");
    const ws = join(base, "dotfiles");
    await Deno.mkdir(join(ws, "rc"), { recursive: true });
    await Deno.mkdir(join(home, ".config", "nvim"), { recursive: true });
    const links: Record<string, string> = {
      vimrc: ".vimrc",
      "init.lua": ".config/nvim/init.lua",
      gdbinit: ".gdbinit",
      psqlrc: ".psqlrc",
      "tmux.conf": ".tmux.conf",
    };
    for (const [file, name] of Object.entries(links)) {
      await Deno.writeTextFile(join(ws, "rc", file), `# ${file}\n`);
      await Deno.symlink(join(ws, "rc", file), join(home, name));
    }
    const policy = createPolicy({
      workspace: ws,
      home,
      hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home },
    });
    const shell = `for f in ${
      Object.keys(links).join(" ")
    } other; do echo evil >> rc/$f; done; echo end`;
    const out = (await collect(await spawnSandboxed({ shell, policy, stdin: "null" }))).out;
    assert.match(out, /end/);
    for (const file of Object.keys(links)) {
      assert.equal(await Deno.readTextFile(join(ws, "rc", file)), `# ${file}\n`, file);
    }
    assert.equal(await Deno.readTextFile(join(ws, "rc", "other")), "evil\n");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("less's lesskey, vim's directory, a prompt's config and bash completions linked into the workspace are read-only", async () => {
  // Attack round 25 concgit c11: less's `#env LESSOPEN=|cmd` ran at the user's next `git log`,
  // `~/.vim/plugin/*.vim` at the next `vim`; none of them was on the list.
  useTestRunDir();
  const base = await visibleTempDir("penguin-linked-rc2-");
  try {
    const home = join(base, "home");
    const ws = join(base, "dotfiles");
    await Deno.mkdir(join(ws, "rc", "vim", "plugin"), { recursive: true });
    await Deno.mkdir(join(home, ".config"), { recursive: true });
    const files: Record<string, string> = {
      lesskey: ".lesskey",
      "starship.toml": ".config/starship.toml",
      bash_completion: ".bash_completion",
      "early-init.el": ".emacs.d/early-init.el",
    };
    await Deno.mkdir(join(home, ".emacs.d"));
    for (const [file, name] of Object.entries(files)) {
      await Deno.writeTextFile(join(ws, "rc", file), `# ${file}\n`);
      await Deno.symlink(join(ws, "rc", file), join(home, name));
    }
    await Deno.writeTextFile(join(ws, "rc", "vim", "vimrc"), '" vimrc\n');
    await Deno.symlink(join(ws, "rc", "vim"), join(home, ".vim"));
    const policy = createPolicy({
      workspace: ws,
      home,
      hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home },
    });
    const shell = `for f in ${Object.keys(files).join(" ")} other; do echo evil >> rc/$f; done; ` +
      `echo evil >> rc/vim/vimrc; echo 'call system("x")' > rc/vim/plugin/a.vim; echo end`;
    const out = (await collect(await spawnSandboxed({ shell, policy, stdin: "null" }))).out;
    assert.match(out, /end/);
    for (const file of Object.keys(files)) {
      assert.equal(await Deno.readTextFile(join(ws, "rc", file)), `# ${file}\n`, file);
    }
    assert.equal(await Deno.readTextFile(join(ws, "rc", "vim", "vimrc")), '" vimrc\n');
    await assert.rejects(Deno.stat(join(ws, "rc", "vim", "plugin", "a.vim")), Deno.errors.NotFound);
    assert.equal(await Deno.readTextFile(join(ws, "rc", "other")), "evil\n");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a startup file lying in place in a workspace that is a home subdirectory is read-only", async () => {
  // Attack round 25 concgit c24, c25: with the workspace `~/.config/nvim` or `~/.config/tmux`,
  // only links were guarded; the files in place were written, and the user's next `nvim` or
  // `tmux` ran what the model wrote.
  useTestRunDir();
  const base = await visibleTempDir("penguin-inplace-rc-");
  try {
    const home = join(base, "home");
    for (const [dir, file] of [[".config/nvim", "init.lua"], [".config/tmux", "tmux.conf"]]) {
      const ws = join(home, dir!);
      await Deno.mkdir(join(ws, "lua"), { recursive: true });
      await Deno.writeTextFile(join(ws, file!), `-- ${file}\n`);
      const policy = createPolicy({
        workspace: ws,
        home,
        hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home },
      });
      const shell = `echo evil >> ${file}; echo evil >> lua/other.lua; echo end`;
      const run = await spawnSandboxed({ shell, policy, stdin: "null" }).then(
        async (p) => (await collect(p)).out,
        (e: Error) => `refused: ${e.message}`,
      );
      assert.equal(await Deno.readTextFile(join(ws, file!)), `-- ${file}\n`, `${dir}: ${run}`);
    }
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
