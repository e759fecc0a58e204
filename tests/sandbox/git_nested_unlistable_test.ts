// Repositories a command made that the walk took for nothing (attack round 29):
// - j01: a git directory whose `objects` (or `refs`) is a FIFO with an execute bit passes git's
//   test (`access(X_OK)`); penguin counted only a directory, a link or an executable regular file;
// - j07: a directory of penguin's user that it may not list (`chmod 111 d`) was taken for empty,
//   while git reaches `d/sub/.git` by its path: now the walk is incomplete (round 30 n02: making it
//   listable by name followed a link swapped in, onto the user's `~/.bashrc`);
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
  name: "a directory penguin may not list leaves the walk incomplete; an unlistable hooks arms",
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
        `import { disarmNewRepos, findNestedRepos, tooLongProblem } from ${
          JSON.stringify(pathToFileURL(join(REPO, "lib/sandbox/git_nested.ts")).href)
        };\n` +
          `const ws = Deno.args[0];\n` +
          `const out = await disarmNewRepos(ws, [], [ws]);\n` +
          `const walk = await findNestedRepos(ws);\n` +
          `console.log(JSON.stringify({ out, incomplete: walk.tooLong, ` +
          `why: walk.tooLong.map((d) => tooLongProblem(d, ws)) }));\n`,
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
      const got = JSON.parse(text) as {
        out: { from: string; to: string; why: string }[];
        incomplete: string[];
        why: string[];
      };
      // The hooks directory it cannot list arms its repository, which is renamed aside.
      assert.deepEqual(got.out.map((d) => d.from), [join(ws, "s", ".git")], text);
      assert.notEqual(got.out[0]!.to, "");
      assert.match(got.out[0]!.why, /hooks directory .* cannot be listed/);
      // The directory it cannot list is never changed (a chmod by name followed a link swapped in:
      // round 30 n02): the walk is incomplete, which refuses the next command, saying what to do.
      // (The disarmed directory's hooks, still unlistable, count too.)
      assert.ok(got.incomplete.includes(join(ws, "d")), text);
      assert.match(
        got.why[got.incomplete.indexOf(join(ws, "d"))]!,
        /cannot be listed.*chmod u\+rx/,
      );
      assert.equal((await Deno.stat(join(ws, "d"))).mode! & 0o777, 0o111);
      await hostGit(home, join(ws, "s"), ["commit", "--allow-empty", "-m", "x"]);
      assert.equal(await exists(`${marker}.hook`), false);
    }),
});
