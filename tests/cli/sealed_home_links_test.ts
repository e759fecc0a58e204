// Symbolic links and `..` steps on the way to what a startup file sources (issue 26 item 4,
// attack pass final8 P1–P8): a real `penguin run` whose `.bashrc` sources a file through a link
// in a subdirectory of the workspace, or through `a/../b.sh`. The host's next shell resolves the
// path again, so the model must not re-point the link nor replace `a` by a link; a link lying
// directly in the workspace is refused by name.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { addServerModel, visibleTempDir } from "../support/roots.ts";
import { runInHomeWorkspace } from "./_sealed_home.ts";
import { startupTextPaths } from "../../lib/sandbox/_source_lines.ts";

/** The tool results in a request body (what the model was shown of its command). */
function toolOutput(body: string): string {
  const messages =
    (JSON.parse(body) as { messages: { role: string; content: unknown }[] }).messages;
  return JSON.stringify(messages.filter((m) => m.role === "tool").map((m) => m.content));
}

/** One command of the model, then a text answer; returns what the model was shown of it. */
async function runOnce(base: string, home: string, cmd: string): Promise<string> {
  const server = await startModelServer({
    turns: [turn.of(item.toolCall("exec_command", { cmd }, { id: "c1" })), turn.text("done")],
  });
  try {
    return toolOutput(await runInHomeWorkspace(join(base, "data"), home, server));
  } finally {
    await server.close();
  }
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
    const server = await startModelServer({ turns: [turn.text("done")] });
    try {
      const root = join(base, "data");
      await addServerModel(root, server);
      const r = await runCli(["--root", root, "run", "--workspace", ws, "-m", "go"], {
        env: { HOME: home },
      });
      assert.notEqual(r.code, 0, r.stdout);
      assert.match(r.stderr, /symbolic link "[^"]*\/dotfiles\/shell"/);
      assert.ok(r.stderr.includes(join(home, ".bashrc")), r.stderr);
      assert.ok(r.stderr.includes("real path"), r.stderr);
    } finally {
      await server.close();
    }
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
