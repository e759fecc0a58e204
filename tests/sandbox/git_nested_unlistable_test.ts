// Repositories a command made that the walk took for nothing (attack round 29):
// - j01: a git directory whose `objects` (or `refs`) is a FIFO with an execute bit passes git's
//   test (`access(X_OK)`); penguin counted only a directory, a link or an executable regular file;
// - j07: a directory of penguin's user that it may not list (`chmod 111 d`) was taken for empty,
//   while git reaches `d/sub/.git` by its path;
// - j08: a `hooks` directory penguin may not list was taken for none, while git runs
//   `hooks/pre-commit` by its name.
// j07 and j08 only show where penguin cannot read everything: root without CAP_DAC_OVERRIDE and
// CAP_DAC_READ_SEARCH stands for an ordinary user (the walk runs in such a process).
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { disarmNewRepos } from "../../lib/sandbox/git_nested.ts";
import { REPO } from "../support/cli.ts";
import { hostGit } from "../support/host_git.ts";
import { exists, visibleTempDir } from "./_helpers.ts";

async function sh(cwd: string, script: string): Promise<void> {
  const o = await new Deno.Command("bash", { args: ["-c", script], cwd }).output();
  assert.ok(o.success, new TextDecoder().decode(o.stderr));
}

/** A workspace and a home for the host's git, removed afterwards. */
async function withWs(fn: (ws: string, home: string, base: string) => Promise<void>) {
  const base = await visibleTempDir("penguin-git-unlistable-");
  const ws = join(base, "ws");
  const home = join(base, "home");
  await Deno.mkdir(ws);
  await Deno.mkdir(home);
  try {
    await fn(ws, home, base);
  } finally {
    await sh(base, "chmod -R u+rwx .");
    await Deno.remove(base, { recursive: true });
  }
}

for (const fifo of ["objects", "refs"]) {
  Deno.test(`a git directory whose ${fifo} is a FIFO with an execute bit is disarmed`, () =>
    withWs(async (ws, home, base) => {
      const marker = join(base, "ran");
      const other = fifo === "objects" ? "refs" : "objects";
      await sh(
        ws,
        `mkdir -p deep/x && cd deep/x && mkdir ${other} && mkfifo -m 755 ${fifo} && ` +
          `echo 'ref: refs/heads/main' > HEAD && printf '[core]\\n\\trepositoryformatversion = 0\\n` +
          `\\tworktree = .\\n\\tfsmonitor = "touch ${marker}; false"\\n' > config`,
      );
      const out = await disarmNewRepos(ws, [], [ws]);
      assert.equal(out.length, 1, JSON.stringify(out));
      // A git directory that is its own work tree: its HEAD is renamed aside.
      assert.equal(out[0]!.from, join(ws, "deep", "x", "HEAD"));
      assert.notEqual(out[0]!.to, "");
      const status = await hostGit(home, join(ws, "deep"), ["status"]);
      assert.equal(await exists(marker), false, status.out);
    }));
}

/** Whether this process can drop the capabilities that let root read every directory. */
const canDropDac = Deno.uid() === 0 &&
  ["/usr/bin/setpriv", "/bin/setpriv"].some((p) => {
    try {
      return Deno.statSync(p).isFile;
    } catch {
      return false;
    }
  });

Deno.test({
  name: "directories penguin may not list are made listable, or their repository is disarmed",
  ignore: !canDropDac,
  fn: () =>
    withWs(async (ws, home, base) => {
      const marker = join(base, "ran");
      await sh(
        ws,
        `git init -q d/sub && git -C d/sub config core.fsmonitor "touch ${marker}.fsmonitor; ` +
          `false" && chmod 111 d && ` +
          `git init -q s && printf '#!/bin/sh\\ntouch ${marker}.hook\\n' > s/.git/hooks/pre-commit` +
          ` && chmod 755 s/.git/hooks/pre-commit && chmod 111 s/.git/hooks`,
      );
      const script = join(base, "walk.ts");
      await Deno.writeTextFile(
        script,
        `import { disarmNewRepos } from ${
          JSON.stringify(pathToFileURL(join(REPO, "lib/sandbox/git_nested.ts")).href)
        };\n` +
          `console.log(JSON.stringify(await disarmNewRepos(Deno.args[0], [], [Deno.args[0]])));\n`,
      );
      const drop = "-dac_override,-dac_read_search";
      const o = await new Deno.Command("setpriv", {
        args: [
          `--bounding-set=${drop}`,
          `--inh-caps=${drop}`,
          Deno.execPath(),
          "run",
          "-A",
          "--config",
          join(REPO, "deno.json"),
          script,
          ws,
        ],
        cwd: REPO,
      }).output();
      const text = new TextDecoder().decode(o.stdout);
      assert.ok(o.success, new TextDecoder().decode(o.stderr));
      const out = JSON.parse(text) as { from: string; to: string; why: string }[];
      const from = out.map((d) => d.from).sort();
      assert.deepEqual(from, [join(ws, "d", "sub", ".git"), join(ws, "s", ".git")], text);
      assert.ok(out.every((d) => d.to !== ""), text);
      assert.match(
        out.find((d) => d.from.includes("/s/"))!.why,
        /hooks directory .* cannot be listed/,
      );
      // Only the owner's read and search bits were added.
      assert.equal((await Deno.stat(join(ws, "d"))).mode! & 0o777, 0o511);
      await hostGit(home, join(ws, "d", "sub"), ["status"]);
      await hostGit(home, join(ws, "s"), ["commit", "--allow-empty", "-m", "x"]);
      assert.equal(await exists(`${marker}.fsmonitor`), false);
      assert.equal(await exists(`${marker}.hook`), false);
    }),
});
