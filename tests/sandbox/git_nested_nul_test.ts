// A NUL byte in a nested repository's configuration (attack round 28 f01, f05, f09-nulmv,
// f10-subsecws): git reads `[core "fsmonitor\0"] x = ./evil.sh` as `core.fsmonitor`, since it
// uses the key as a C string, and `[include "path\0"]` as an include. A repository a command
// made with such a file is armed (penguin reports the NUL it cannot take as plain text), so a
// real `penguin run` whose model makes one leaves nothing the user's host `git status` runs.
import assert from "node:assert/strict";
import { join } from "node:path";
import { armedReason, findNestedRepos } from "../../lib/sandbox/git_nested.ts";
import { hostRun } from "../support/host_git.ts";
import { exists } from "./_helpers.ts";
import { withRepoDirs } from "./_git_repo.ts";
import { attack, exec, hostGit, ranMarker, ranOf, withWorld } from "./_git_attack.ts";

/** The config texts (printf format) that hide a program from a reader that keeps the NUL. */
const HIDDEN: Record<string, string> = {
  subsection: '[core "fsmonitor\\0"]\\n\\tx = ./evil.sh\\n',
  tab: '[core\\t"fsmonitor\\0"]\\n\\tx = ./evil.sh\\n',
  include: '[include "path\\0"]\\n\\tx = ../inc.cfg\\n',
};

Deno.test("a nested repository whose config hides a key behind a NUL is armed", async (t) => {
  await withRepoDirs("penguin-git-nul-", async (r) => {
    for (const [name, text] of Object.entries(HIDDEN)) {
      await t.step(name, async () => {
        const dir = join(r.ws, name);
        const made = await hostRun(r.home, r.ws, "sh", [
          "-c",
          `git init -q ${name} && printf '${text}' >> ${name}/.git/config && ` +
          `printf '[core]\\n\\tfsmonitor = ./evil.sh\\n' > ${name}/inc.cfg && ` +
          `echo '#!/bin/sh' > ${name}/evil.sh`,
        ]);
        assert.equal(made.code, 0, made.out);
        // git itself reads the hidden key.
        const listed = await hostRun(r.home, dir, "git", ["config", "--get", "core.fsmonitor"]);
        assert.equal(listed.out.trim(), "./evil.sh");
        const repo = (await findNestedRepos(r.ws)).repos.find((x) => x.workTree === dir)!;
        assert.match((await armedReason(repo, [r.ws], r.home)) ?? "not armed", /a NUL byte/);
      });
    }
  });
});

Deno.test("penguin run: nested repositories with NUL-hidden fsmonitor and include run nothing on the host", async () => {
  await withWorld(async (w) => {
    const names = Object.keys(HIDDEN);
    const make = names.map((name) =>
      `git init -q ${name} && echo a > ${name}/a && git -C ${name} add a && ` +
      `git -C ${name} -c user.name=m -c user.email=m@x commit -q -m c && ` +
      `printf '${HIDDEN[name]}' >> ${name}/.git/config && ` +
      `printf '[core]\\n\\tfsmonitor = ./evil.sh\\n' > ${name}/inc.cfg && ` +
      `printf '#!/bin/sh\\ntouch ${ranMarker(w, name)}\\necho {}\\n' > ${name}/evil.sh && ` +
      `chmod +x ${name}/evil.sh && echo b >> ${name}/a && ` +
      `git -C ${name} config --get core.fsmonitor`
    ).join(" && ");
    const { outputs } = await attack(w, [exec(`${make} && echo made`)]);
    // Inside the sandbox git read the hidden key: the attack was set up.
    assert.match(outputs, /\.\/evil\.sh[\s\S]*made/);
    for (const name of names) {
      await hostGit(w, join(w.ws, name), ["status"]);
      await hostGit(w, join(w.ws, name), ["diff"]);
    }
    await hostGit(w, w.ws, ["status"]);
    assert.deepEqual(await ranOf(w, names), [], "the user's git ran the model's program");
    for (const name of names) {
      assert.equal(await exists(join(w.ws, name, ".git")), false, `${name}/.git stays`);
    }
  });
});
