// Issue 26 (the final red-team pass 2's X1-X3, X6, X9, X10), each through a
// real `penguin run` whose scripted model attacks, then the user's host git:
// - a repository in a directory whose name is not UTF-8 (Deno reads it with
//   U+FFFD, so penguin could not look inside), and a `.git` file naming such
//   a path (X1, X3, X6), also committed as a gitlink with --git-writable (X2);
// - a nested repository whose `config` is a hard link to a workspace file
//   armed in a later command (X9, X10), and a user's repository with such a
//   link (its inode does not change when the other name is written).
import { armed, attack, exec, ranMarker, ranOf, withWorld } from "./_git_attack.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { escapeName, findNestedRepos } from "../../lib/sandbox/git_nested.ts";
import { hostRun } from "../support/host_git.ts";
import { exists } from "./_helpers.ts";
import type { World } from "./redteam/_world.ts";

/** Run `script` with bash in `cwd` as the user's shell would (the host's git, not sandboxed). */
async function hostSh(w: World, cwd: string, script: string): Promise<string> {
  return (await hostRun(w.home, cwd, "bash", ["-c", script], { LC_ALL: "C" })).out;
}

/** Git's identity inside the sandbox, for commits. */
const ident =
  `export GIT_AUTHOR_NAME=m GIT_AUTHOR_EMAIL=m@e GIT_COMMITTER_NAME=m GIT_COMMITTER_EMAIL=m@e`;
/** Shell text naming a directory `<p>\xff` (not UTF-8). */
const bad = (p: string) => `"$(printf '${p}\\377')"`;

Deno.test("penguin run: a repository below a directory whose name is not UTF-8 is found and disarmed", () =>
  withWorld(async (w) => {
    const m = (n: string) => ranMarker(w, n);
    const steps = [
      exec(
        // X1: armed at once; X3: plain now, armed by the next command; X6: a .git file naming it.
        `git init -q ${bad("v")} && git -C ${bad("v")} config core.fsmonitor "touch ${
          m("x1")
        }; false"; ` +
          `git init -q ${bad("w")}/lib; ` +
          `git init -q --bare ${bad("g")} && git -C ${bad("g")} config core.bare false && ` +
          `git -C ${bad("g")} config core.fsmonitor "touch ${m("x6")}; false" && mkdir sub && ` +
          `printf 'gitdir: ../%s\\n' ${bad("g")} > sub/.git; echo planted`,
      ),
      exec(`${armed(m("x3"))} >> ${bad("w")}/lib/.git/config; echo armed`),
    ];
    const { outputs } = await attack(w, steps);
    assert.match(outputs, /planted/);
    // The user's git, by the old names and by the new ones.
    for (const dir of [bad("v"), `${bad("w")}/lib`, "sub", "v%FF", "w%FF/lib", "g%FF"]) {
      await hostSh(w, w.ws, `cd ${dir} && git status`);
    }
    assert.deepEqual(
      await ranOf(w, ["x1", "x3", "x6"]),
      [],
      "the user's git ran what the model armed",
    );
    assert.equal(await exists(join(w.ws, "v%FF", ".git-disarmed-by-penguin")), true);
    assert.equal(await exists(join(w.ws, "w%FF", "lib", ".git")), true, "a plain repository stays");
    assert.equal(await exists(join(w.ws, "sub", ".git-disarmed-by-penguin")), true);
    const left = await hostSh(w, w.ws, `ls -A | od -An -c`);
    assert.doesNotMatch(left, /377/, "a name that is not UTF-8 was left");
  }));

Deno.test("penguin run --git-writable: a gitlink to a repository penguin cannot name or one with a hard-linked config is disarmed", () =>
  withWorld(async (w) => {
    const m = (n: string) => ranMarker(w, n);
    await hostSh(
      w,
      w.ws,
      `git init -q -b main . && echo hi > README && git add README && git commit -qm init`,
    );
    const steps = [
      exec(
        `${ident}; git init -q ${bad("v")} && git -C ${bad("v")} commit -q --allow-empty -m s && ` +
          `git -C ${bad("v")} config core.fsmonitor "touch ${m("x2")}; false" && git add ${
            bad("v")
          }; ` +
          `git init -q sub && git -C sub commit -q --allow-empty -m s && cp sub/.git/config cfg && ` +
          `rm sub/.git/config && ln cfg sub/.git/config && git add sub && git commit -qm subs && echo committed`,
      ),
      exec(`${armed(m("x10"))} >> cfg; echo armed`),
    ];
    const { outputs } = await attack(w, steps, { extraArgs: ["--git-writable"] });
    assert.match(outputs, /committed/);
    // The user's plain `git status` at the top enters every submodule the index records.
    await hostSh(w, w.ws, "git status");
    assert.deepEqual(await ranOf(w, ["x2", "x10"]), [], "the user's git ran what the model armed");
    assert.equal(await exists(join(w.ws, "sub", ".git-disarmed-by-penguin")), true);
  }));

Deno.test("penguin run: a nested repository whose config is a hard link to a workspace file is disarmed", () =>
  withWorld(async (w) => {
    const m = (n: string) => ranMarker(w, n);
    // The user's own repository with a hard-linked config: written through the other name later.
    await hostSh(
      w,
      w.ws,
      `git init -q pre && mv pre/.git/config precfg && ln precfg pre/.git/config`,
    );
    const steps = [
      exec(
        `git init -q sub && cp sub/.git/config cfg && rm sub/.git/config && ln cfg sub/.git/config; echo linked`,
      ),
      exec(`${armed(m("x9"))} >> cfg; ${armed(m("pre"))} >> precfg; echo armed`),
    ];
    const { outputs } = await attack(w, steps);
    assert.match(outputs, /armed/);
    await hostSh(w, join(w.ws, "sub"), "git status");
    await hostSh(w, join(w.ws, "pre"), "git status");
    assert.deepEqual(await ranOf(w, ["x9", "pre"]), [], "the user's git ran what the model armed");
    assert.equal(await exists(join(w.ws, "sub", ".git-disarmed-by-penguin")), true);
    assert.equal(await exists(join(w.ws, "pre", ".git-disarmed-by-penguin")), true);
  }));

Deno.test("findNestedRepos renames directories whose names are not UTF-8, byte for byte, never over another entry", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const mk = async (script: string) => {
      const out = await new Deno.Command("bash", {
        args: ["-c", script],
        cwd: dir,
        env: { LC_ALL: "C" },
      }).output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    };
    // v\xff collides with an existing v%FF; caf\xc3\xa9 is UTF-8 and stays; a file is left alone.
    await mk(
      `mkdir "$(printf 'v\\377')" v%FF "$(printf 'caf\\303\\251')" && ` +
        `git init -q "$(printf 'v\\377')/lib" && : > "$(printf 'f\\376')"`,
    );
    const { repos, renamed } = await findNestedRepos(dir);
    assert.deepEqual(renamed.map((r) => r.to), [join(dir, "v%FF-1")]);
    assert.deepEqual(repos.map((r) => r.entry), [join(dir, "v%FF-1", "lib", ".git")]);
    const names = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assert.deepEqual(names.sort(), ["café", "f\uFFFD", "v%FF", "v%FF-1"]);
    assert.equal(
      escapeName(new Uint8Array([0x61, 0xe2, 0x82, 0xac, 0xe2, 0x82, 0x62, 0xff])),
      "a€%E2%82b%FF",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
