// Symbolic links and `..` steps on the way to what a startup file sources (issue 26 item 4,
// attack pass final8 P1–P8): a real `penguin run` whose `.bashrc` sources a file through a link
// in a subdirectory of the workspace, or through `a/../b.sh`. The host's next shell resolves the
// path again, so the model must not re-point the link nor replace `a` by a link; a link lying
// directly in the workspace is refused by name.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item } from "../support/model_server.ts";
import { outputsOf, runCalls, runRefused } from "../support/home_run.ts";
import { visibleTempDir } from "../support/roots.ts";
import { startupTextPaths } from "../../lib/sandbox/_source_lines.ts";

/** One command of the model in a sealed home, then a text answer; returns what it was shown. */
async function runOnce(base: string, home: string, cmd: string): Promise<string> {
  const body = await runCalls(
    { root: join(base, "data"), home, ws: home, flags: ["--allow-home-workspace"] },
    [item.toolCall("exec_command", { cmd }, { id: "c1" })],
  );
  return outputsOf(body)["c1"] ?? "";
}

Deno.test("run: a sealed home's sourced file through a link in a subdirectory cannot be re-pointed", async () => {
  const base = await visibleTempDir("penguin-sealed-link-");
  try {
    const home = join(base, "home");
    await Deno.mkdir(join(home, "proj", "real"), { recursive: true });
    await Deno.writeTextFile(join(home, "proj", "real", "x.sh"), "export X=1\n");
    await Deno.symlink("real", join(home, "proj", "lnk"));
    await Deno.writeTextFile(join(home, ".bashrc"), ". ~/proj/lnk/x.sh\n");
    const body = await runOnce(
      base,
      home,
      // The words echoed are split in the command, so only its output holds them whole.
      "cd ~/proj && ln -sfn /tmp lnk && echo re''linked; rm lnk && echo re''moved; echo tr''ied",
    );
    assert.ok(body.includes("tried"), body);
    assert.ok(!body.includes("relinked") && !body.includes("removed"), body);
    assert.equal(await Deno.readLink(join(home, "proj", "lnk")), "real");
    assert.equal(await Deno.readTextFile(join(home, "proj", "real", "x.sh")), "export X=1\n");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("run: a sealed home's `. ~/w/a/../b.sh` keeps `a` from being replaced by a link", async () => {
  const base = await visibleTempDir("penguin-sealed-dotdot-");
  try {
    const home = join(base, "home");
    await Deno.mkdir(join(home, "w", "a"), { recursive: true });
    await Deno.writeTextFile(join(home, "w", "b.sh"), "export B=1\n");
    await Deno.writeTextFile(join(home, ".bashrc"), ". ~/w/a/../b.sh\n");
    const body = await runOnce(
      base,
      home,
      "cd ~/w && mkdir -p deep/d; echo 'touch /tmp/pwned' > deep/b.sh; " +
        "mv a a.old && echo mo''ved; ln -s deep/d a && echo re''linked; echo tr''ied",
    );
    assert.ok(body.includes("tried"), body);
    assert.ok(!body.includes("moved") && !body.includes("relinked"), body);
    assert.equal((await Deno.lstat(join(home, "w", "a"))).isDirectory, true);
    assert.equal(await Deno.readTextFile(join(home, "w", "b.sh")), "export B=1\n");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("run: a link directly in the workspace on the way to a sourced file is refused by name", async () => {
  const base = await visibleTempDir("penguin-dotfiles-link-");
  try {
    const home = join(base, "home");
    const ws = join(home, "dotfiles");
    await Deno.mkdir(join(ws, "shell-v2"), { recursive: true });
    await Deno.writeTextFile(join(ws, "shell-v2", "env.sh"), "export E=1\n");
    await Deno.symlink("shell-v2", join(ws, "shell"));
    await Deno.writeTextFile(join(home, ".bashrc"), ". ~/dotfiles/shell/env.sh\n");
    const stderr = await runRefused({ root: join(base, "data"), home, ws });
    assert.match(stderr, /symbolic link "[^"]*\/dotfiles\/shell"/);
    assert.ok(stderr.includes(join(home, ".bashrc")), stderr);
    assert.ok(stderr.includes("real path"), stderr);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("the startup-file lexer keeps a `..` spelling as written besides the joined one", () => {
  const got = startupTextPaths(". ~/w/a/../b.sh\nexport P=~/t/./x/../bin:$PATH\n", "/home/u");
  assert.deepEqual(got.sourced, ["/home/u/w/b.sh"]);
  assert.ok(got.dotted.includes("/home/u/w/a/../b.sh"), got.dotted.join(", "));
  assert.ok(got.dotted.includes("/home/u/t/x/../bin"), got.dotted.join(", "));
  assert.ok(got.named.includes("/home/u/t/bin"), got.named.join(", "));
});
