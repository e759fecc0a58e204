// A home path shown read-only (penguin.jsonc `home_readable`, a toolchain directory) may lie in
// a directory another session's model can write (that session's workspace, `~/projA`). Between
// this session's plan and bwrap's bind, that model swaps it for a link to the home (attack round
// 22, concgit): the launcher opens each shown directory itself, checks that the descriptor lies
// at its path (the kernel's path, not bash's `$PWD`, round 23), and bwrap binds what was opened;
// a shown file is bound as penguin's copy of it (round 23). The swap refuses the command; the
// hidden home never shows. Each launch: the direct path's sh, the direct path's bash (more than five opened
// paths), the supervised path, and the sandbox kept for a session.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  createPolicy,
  type SandboxPlan,
  type SandboxPolicy,
  spawnSandboxed,
} from "../../lib/sandbox/mod.ts";
import { _pinLaunch } from "../../lib/sandbox/spawn.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { keepStandIns } from "../../lib/sandbox/_placeholders.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { visibleTempDir } from "./_helpers.ts";
import { useTestRunDir } from "../support/run_dir.ts";
import { WS_OPEN } from "../../lib/sandbox/_supervisor.ts";

useTestRunDir();

const SECRET = "id-rsa-SECRET-4f1c";

/** A home with a key, another session's workspace `projA` holding `docs/` and `notes.txt`. */
async function homeWith(base: string) {
  const home = join(base, "home");
  const projA = join(home, "projA");
  await Deno.mkdir(join(home, ".ssh"), { recursive: true });
  await Deno.writeTextFile(join(home, ".ssh", "id_rsa"), `${SECRET}\n`);
  await Deno.mkdir(join(projA, "docs"), { recursive: true });
  await Deno.writeTextFile(join(projA, "docs", "readme"), "docs-visible\n");
  await Deno.writeTextFile(join(projA, "notes.txt"), "notes-visible\n");
  // More shown directories: past five opened paths the direct path opens them with bash.
  for (let i = 0; i < 5; i++) await Deno.mkdir(join(home, `sdk${i}`));
  const ws = join(base, "ws");
  await Deno.mkdir(ws);
  return { home, projA, ws };
}

type Launch = "sh" | "bash" | "supervised" | "kept";

/** The command's output and status, or the refusal's message (status null). */
async function run(policy: SandboxPolicy, shell: string, launch: Launch) {
  let out = "";
  let child;
  try {
    child = await spawnSandboxed({
      shell,
      policy,
      stdin: "null",
      ...(launch === "kept" ? { reuse: true } : {}),
      onOutput: (chunk) => void (out += chunk),
    });
  } catch (err) {
    if (!(err instanceof PenguinError)) throw err;
    return { out: err.message, code: null };
  }
  const status = await child.status;
  await child.outputClosed;
  return { out, code: status.code };
}

for (const launch of ["sh", "bash", "supervised", "kept"] as const) {
  for (const kind of ["directory", "file"] as const) {
    Deno.test({
      name: `a shown home ${kind} swapped for a link after the plan is not bound (${launch})`,
      ignore: !bwrap,
      async fn() {
        const base = await visibleTempDir("penguin-reveal-swap-");
        const keeping = launch === "kept" ? keepStandIns() : undefined;
        try {
          const { home, projA, ws } = await homeWith(base);
          const shown = kind === "directory" ? join(projA, "docs") : join(projA, "notes.txt");
          const more = launch === "bash" ? [0, 1, 2, 3, 4].map((i) => join(home, `sdk${i}`)) : [];
          const policy = {
            ...createPolicy({
              workspace: ws,
              home,
              homeReadable: [shown, ...more],
              hostEnv: { PATH: "/usr/bin:/bin", HOME: home },
            }),
            hideOtherDataRoots: false,
          };
          const look = kind === "directory"
            ? `cat ${shown}/readme ${shown}/.ssh/id_rsa ${shown}/id_rsa 2>&1; ls -a ${shown} 2>&1`
            : `cat ${shown} 2>&1`;
          // Before any swap the path is shown, read-only.
          const before = await run(policy, look, launch);
          assert.equal(before.code, 0, before.out);
          assert.match(before.out, kind === "directory" ? /docs-visible/ : /notes-visible/);
          // The other session's model swaps it for a link between this plan and the bind.
          let swapped = 0;
          let planned: SandboxPlan | undefined;
          _pinLaunch({
            direct: launch !== "supervised",
            afterPlan: async (plan) => {
              planned = plan;
              if (swapped++ > 0) return;
              await Deno.rename(shown, `${shown}.moved`);
              const target = kind === "directory"
                ? join(home, ".ssh")
                : join(home, ".ssh", "id_rsa");
              await Deno.symlink(target, shown);
            },
          });
          const after = await run(policy, look, launch);
          _pinLaunch({});
          // A directory is bound from a descriptor the launcher checked; a file, from penguin's
          // copy of it (`_shown_copies.ts`), which no model can reach.
          const reveal = planned?.reveals?.find((r) => r.target === shown);
          assert.ok(reveal, JSON.stringify(planned?.reveals));
          assert.equal(reveal.kind, kind === "directory" ? "dir" : "file");
          if (kind === "directory") assert.equal(reveal.source, shown);
          else assert.notEqual(reveal.source, shown);
          // Never the key: the start is refused (the launcher's words), or, the plan made again
          // once the start failed, the command runs without the swapped path; a file shows the
          // copy taken when the plan was made.
          assert.doesNotMatch(after.out, new RegExp(SECRET));
          if (kind === "file") {
            assert.equal(after.code, 0, after.out);
            assert.match(after.out, /notes-visible/);
          } else if (after.code === null) {
            assert.match(
              after.out,
              /shown read-only to commands, is no longer the directory the plan checked/,
            );
          } else {
            assert.match(after.out, /No such file or directory/);
          }
          // The next plan sees the link and leaves the path out: commands run again, the key unseen.
          const next = await run(policy, `${look}; echo ran`, launch);
          assert.doesNotMatch(next.out, new RegExp(SECRET));
          assert.equal(next.code, 0, next.out);
          assert.match(next.out, /^ran$/m);
        } finally {
          _pinLaunch({});
          await keeping?.end();
          await Deno.remove(base, { recursive: true });
        }
      },
    });
  }
}

Deno.test({
  name: "the launcher checks the descriptor it opened, not bash's $PWD of the name (round 23)",
  ignore: !bwrap,
  async fn() {
    const base = await visibleTempDir("penguin-reveal-pwd-");
    try {
      const planned = join(base, "docs");
      const other = join(base, "home");
      await Deno.mkdir(planned);
      await Deno.mkdir(other);
      // bash's `cd -P` sets $PWD from its look at the name, then enters it: a directory swapped for
      // a link in between is entered while $PWD names the planned one. The first `cd` here does
      // exactly that, deterministically.
      const lie = `cd() { if [ -z "$lied" ]; then lied=1; builtin cd -P -- "$OTHER" || return; ` +
        `PWD=$3; return 0; fi; builtin cd "$@"; }`;
      const out = await new Deno.Command("bash", {
        args: ["-c", `${lie}\n${WS_OPEN}\nrootopen 8 "$1" d && echo OPENED`, "bash", planned],
        env: { OTHER: other },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      assert.doesNotMatch(text, /OPENED/);
      assert.match(text, /is no longer the directory the plan checked/);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});
