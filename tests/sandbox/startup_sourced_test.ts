// What the user's startup files source through a glob, a variable or zsh's ZDOTDIR is read-only to
// the model like what they source by name (lib/sandbox/_source_lines.ts; attack round 32 u04,
// w08): a `~/.bashrc` loop over `~/.config/bashrc.d/*.sh`, `B=~/.config/bash; . "$B/init.sh"`,
// and `ZDOTDIR` pointing into the workspace let the model's text run in the user's next shell.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy } from "../../lib/sandbox/policy.ts";
import { startupTextPaths } from "../../lib/sandbox/_source_lines.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { putFile as put, shellOutput, visibleTempDir } from "./_helpers.ts";
import { useTestRunDir } from "../support/run_dir.ts";

useTestRunDir();

Deno.test("startupTextPaths: a glob's directory, a variable's path and ZDOTDIR's files are sourced", () => {
  const text = [
    'for f in ~/.config/bashrc.d/*.sh; do . "$f"; done',
    'B=$HOME/.config/bash; . "$B/init.sh"',
    "export ZDOTDIR=~/dots/zsh",
  ].join("\n");
  const got = startupTextPaths(text, "/home/u").sourced;
  for (
    const p of [
      "/home/u/.config/bashrc.d",
      "/home/u/.config/bash/init.sh",
      "/home/u/dots/zsh/.zshrc",
      "/home/u/dots/zsh/.zprofile",
    ]
  ) assert.ok(got.includes(p), `${p}: ${JSON.stringify(got)}`);
  // A system directory's glob is not followed (its files would take the reading's budget).
  assert.ok(!startupTextPaths("for f in /etc/x.d/*.sh; do :; done", "/home/u").sourced.length);
});

Deno.test({
  name: "files sourced through a glob, a variable or ZDOTDIR stay read-only to commands",
  ignore: !bwrap,
  fn: async () => {
    const base = await visibleTempDir("penguin-startup-sourced-");
    try {
      const home = join(base, "home");
      const ws = join(base, "ws");
      await put(join(ws, "env.sh"), "export A=1\n");
      await put(join(ws, "env2.sh"), "export B=1\n");
      await put(join(ws, "zsh", ".zshrc"), "export Z=1\n");
      await put(
        join(home, ".bashrc"),
        'for f in ~/.config/bashrc.d/*.sh; do . "$f"; done\nB=$HOME/.config/bash; . "$B/init.sh"\n',
      );
      await put(join(home, ".config", "bashrc.d", "a.sh"), `. ${ws}/env.sh\n`);
      await put(join(home, ".config", "bash", "init.sh"), `. ${ws}/env2.sh\n`);
      await put(join(home, ".zshenv"), `export ZDOTDIR=${ws}/zsh\n`);
      const policy = createPolicy({
        workspace: ws,
        home,
        hostEnv: { PATH: Deno.env.get("PATH") ?? "", HOME: home },
      });
      const out = await shellOutput(
        policy,
        "echo x >> env.sh; echo rc1=$?; echo x >> env2.sh; echo rc2=$?; " +
          "echo x >> zsh/.zshrc; echo rc3=$?; echo x > zsh/.zprofile; echo rc4=$?; " +
          "echo mine > other.txt; echo rc5=$?",
      );
      assert.doesNotMatch(out, /rc[1-4]=0/, out);
      assert.match(out, /rc5=0/);
      assert.equal(await Deno.readTextFile(join(ws, "env.sh")), "export A=1\n");
      assert.equal(await Deno.readTextFile(join(ws, "env2.sh")), "export B=1\n");
      assert.equal(await Deno.readTextFile(join(ws, "zsh", ".zshrc")), "export Z=1\n");
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});
