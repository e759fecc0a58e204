// A startup file's `..` spelling through a link into the workspace (issue 26 item 4): with
// `~/a -> <ws>/sub` and `. ~/a/../b.sh` in `~/.bashrc`, the host's next shell reads `<ws>/b.sh`
// (the kernel follows `a` before taking `..`). Real `penguin run`s against the scripted model:
// the model's command cannot create that file, nor the link's missing target directory, nor
// change it when it exists; through a chain of two links too, and with the home as workspace.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item } from "../support/model_server.ts";
import { outputsOf, runCalls, withHomeBase } from "../support/home_run.ts";
import { useTestRunDir } from "../support/run_dir.ts";

useTestRunDir();

/**
 * One task with `ws` as workspace and `home` as HOME (the home sealed when it is the
 * workspace) whose model runs `cmd` once; returns what the model was shown of it.
 */
async function runCmd(
  { base, home, ws }: { base: string; home: string; ws: string },
  cmd: string,
): Promise<string> {
  const flags = ws === home ? ["--allow-home-workspace"] : [];
  const body = await runCalls({ root: join(base, "data"), home, ws, flags }, [
    item.toolCall("exec_command", { cmd }, { id: "c1" }),
  ]);
  return outputsOf(body)["c1"] ?? "";
}

/** Whether `p` exists (a dangling link counts). */
async function exists(p: string): Promise<boolean> {
  return await Deno.lstat(p).then(() => true, () => false);
}

// The words echoed are split in the commands, so only their output holds them whole.

Deno.test("run: `. ~/a/../b.sh` with `~/a` a link into the workspace: the missing b.sh stays missing", async () => {
  await withHomeBase("penguin-dotted-missing-", async ({ home, ws, base }) => {
    await Deno.mkdir(join(ws, "sub"));
    await Deno.symlink(join(ws, "sub"), join(home, "a"));
    await Deno.writeTextFile(join(home, ".bashrc"), ". ~/a/../b.sh\n");
    const out = await runCmd({ base, home, ws }, "printf x > b.sh && echo wr''ote; echo tr''ied");
    assert.ok(out.includes("tried") && !out.includes("wrote"), out);
    assert.equal(await exists(join(ws, "b.sh")), false);
  });
});

Deno.test("run: `. ~/a/../b.sh` with `~/a` a link into the workspace: an existing b.sh stays as it is", async () => {
  await withHomeBase("penguin-dotted-present-", async ({ home, ws, base }) => {
    await Deno.mkdir(join(ws, "sub"));
    await Deno.writeTextFile(join(ws, "b.sh"), "export B=1\n");
    await Deno.symlink(join(ws, "sub"), join(home, "a"));
    await Deno.writeTextFile(join(home, ".bashrc"), ". ~/a/../b.sh\n");
    const out = await runCmd(
      { base, home, ws },
      "printf x > b.sh && echo wr''ote; mv b.sh c.sh && echo mo''ved; " +
        "mv sub s2 && echo re''named; echo tr''ied",
    );
    assert.ok(out.includes("tried"), out);
    assert.ok(!out.includes("wrote") && !out.includes("moved") && !out.includes("renamed"), out);
    assert.equal(await Deno.readTextFile(join(ws, "b.sh")), "export B=1\n");
    assert.equal((await Deno.lstat(join(ws, "sub"))).isDirectory, true);
  });
});

Deno.test("run: `. ~/a/../b.sh` with `~/a` leading to a missing workspace directory: neither is made", async () => {
  await withHomeBase("penguin-dotted-nodir-", async ({ home, ws, base }) => {
    await Deno.symlink(join(ws, "sub"), join(home, "a"));
    await Deno.writeTextFile(join(home, ".bashrc"), ". ~/a/../b.sh\n");
    // `mkdir -p` of the read-only stand-in succeeds; nothing can be made in it.
    const out = await runCmd(
      { base, home, ws },
      "mkdir -p sub && printf x > sub/c.sh && echo ma''de; printf x > b.sh && echo wr''ote; " +
        "echo tr''ied",
    );
    assert.ok(out.includes("tried") && !out.includes("made") && !out.includes("wrote"), out);
    assert.equal(await exists(join(ws, "sub")), false);
    assert.equal(await exists(join(ws, "b.sh")), false);
  });
});

Deno.test("run: `. ~/a/../b.sh` through two links into the workspace: the missing b.sh stays missing", async () => {
  await withHomeBase("penguin-dotted-chain-", async ({ home, ws, base }) => {
    await Deno.mkdir(join(ws, "p", "sub"), { recursive: true });
    await Deno.mkdir(join(home, "o"));
    await Deno.symlink(join(ws, "p"), join(home, "o", "l2"));
    await Deno.symlink(join(home, "o", "l2", "sub"), join(home, "a"));
    await Deno.writeTextFile(join(home, ".bashrc"), ". ~/a/../b.sh\n");
    const out = await runCmd(
      { base, home, ws },
      "printf x > p/b.sh && echo wr''ote; mv p p2 && echo mo''ved; echo tr''ied",
    );
    assert.ok(out.includes("tried"), out);
    assert.ok(!out.includes("wrote") && !out.includes("moved"), out);
    assert.equal(await exists(join(ws, "p", "b.sh")), false);
  });
});

Deno.test("run: a sealed home's `. ~/a/../b.sh`, `~/a` a link to a subdirectory: b.sh and the directory stay missing", async () => {
  await withHomeBase("penguin-dotted-sealed-", async ({ home, base }) => {
    await Deno.mkdir(join(home, "w"));
    await Deno.symlink("w/sub", join(home, "a"));
    await Deno.writeTextFile(join(home, ".bashrc"), ". ~/a/../b.sh\n");
    const out = await runCmd(
      { base, home, ws: home },
      "cd ~/w && mkdir -p sub && printf x > sub/c.sh && echo ma''de; " +
        "printf x > b.sh && echo wr''ote; echo tr''ied",
    );
    assert.ok(out.includes("tried") && !out.includes("made") && !out.includes("wrote"), out);
    assert.equal(await exists(join(home, "w", "sub")), false);
    assert.equal(await exists(join(home, "w", "b.sh")), false);
  });
});

Deno.test("run: a sealed home's existing `~/a/../b.sh` (`a` a link) is hidden and kept as it is", async () => {
  await withHomeBase("penguin-dotted-sealed-hide-", async ({ home, base }) => {
    await Deno.mkdir(join(home, "w", "sub"), { recursive: true });
    await Deno.writeTextFile(join(home, "w", "b.sh"), "export T=sec''ret-b\n");
    await Deno.symlink("w/sub", join(home, "a"));
    await Deno.writeTextFile(join(home, ".bashrc"), ". ~/a/../b.sh\n");
    const out = await runCmd(
      { base, home, ws: home },
      "cd ~/w && echo \"[$(cat b.sh)]\"; printf x > b.sh && echo wr''ote; echo tr''ied",
    );
    assert.ok(out.includes("tried") && !out.includes("wrote"), out);
    assert.ok(out.includes("[]") && !out.includes("secret-b"), out);
    assert.equal(await Deno.readTextFile(join(home, "w", "b.sh")), "export T=sec''ret-b\n");
  });
});

Deno.test("run: `. ~/dots/x.sh` with `~/dots` a link to a missing workspace directory: neither is made", async () => {
  await withHomeBase("penguin-dangling-dots-", async ({ home, ws, base }) => {
    await Deno.symlink(join(ws, "dotfiles"), join(home, "dots"));
    await Deno.writeTextFile(join(home, ".bashrc"), ". ~/dots/x.sh\n");
    const out = await runCmd(
      { base, home, ws },
      "mkdir -p dotfiles && printf x > dotfiles/x.sh && echo wr''ote; echo tr''ied",
    );
    assert.ok(out.includes("tried") && !out.includes("wrote"), out);
    assert.equal(await exists(join(ws, "dotfiles")), false);
  });
});

Deno.test("run: what `<ws>/b.sh`, read for `. ~/a/../b.sh`, sources stays missing too", async () => {
  await withHomeBase("penguin-dotted-onward-", async ({ home, ws, base }) => {
    await Deno.mkdir(join(ws, "sub"));
    await Deno.writeTextFile(join(ws, "b.sh"), `. ${join(ws, "c.sh")}\n`);
    await Deno.symlink(join(ws, "sub"), join(home, "a"));
    await Deno.writeTextFile(join(home, ".bashrc"), ". ~/a/../b.sh\n");
    const out = await runCmd({ base, home, ws }, "printf x > c.sh && echo wr''ote; echo tr''ied");
    assert.ok(out.includes("tried") && !out.includes("wrote"), out);
    assert.equal(await exists(join(ws, "c.sh")), false);
  });
});
