// A writable root other than the workspace (a trusted `writable_roots: ["../shared"]`) swapped for
// a link to another directory by a session whose workspace holds it: the sandbox binds only the
// directory the session started with, or refuses.
import assert from "node:assert/strict";
import { join } from "node:path";
import { bwrapMountArgs, createPolicy } from "../../lib/sandbox/mod.ts";
import type { SandboxPlan, SandboxPolicy } from "../../lib/sandbox/mod.ts";
import { _pinLaunch } from "../../lib/sandbox/spawn.ts";
import { WS_OPEN } from "../../lib/sandbox/_supervisor.ts";
import { visibleTempDir } from "./_helpers.ts";
import { useTestRunDir } from "../support/run_dir.ts";
import { runOrRefusal as run, startSwapper, SWAP_REFUSED as REFUSED } from "./_swap_support.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { dirNames as names } from "../support/dir_names.ts";

// The stand-in registry of this test process is its own (see workspace_swap_test.ts).
useTestRunDir();

interface Layout {
  base: string;
  /** The enclosing session's workspace: holds A's workspace `ws`, `shared` and the link `swap`. */
  outer: string;
  shared: string;
  victim: string;
  policy: SandboxPolicy;
}

/** `outer/ws` (A's workspace), `outer/shared` (A's writable root `../shared`), `outer/swap -> ../victim`. */
async function layout(): Promise<Layout> {
  const base = await visibleTempDir("penguin-rootswap-");
  const outer = join(base, "outer");
  const ws = join(outer, "ws");
  const shared = join(outer, "shared");
  const victim = join(base, "victim");
  for (const d of [ws, shared, victim]) await Deno.mkdir(d, { recursive: true });
  await Deno.symlink("../victim", join(outer, "swap"));
  const policy = createPolicy({
    workspace: ws,
    extraWritable: [join(ws, "..", "shared")],
    home: "",
    hostEnv: { PATH: Deno.env.get("PATH") ?? "", HOME: ws },
  });
  return { base, outer, shared, victim, policy };
}

Deno.test({
  name: "a writable root replaced by a link to another directory: refused, nothing lands there",
  ignore: !bwrap,
  fn: async () => {
    const l = await layout();
    try {
      const ok = await run(l.policy, "echo x > ../shared/before");
      assert.equal(ok.code, 0, ok.out);
      assert.deepEqual((await names(l.shared)).filter((n) => n === "before"), ["before"]);
      // The swap the enclosing session makes, held: `shared` now leads to the victim.
      await Deno.rename(l.shared, join(l.outer, "moved"));
      await Deno.rename(join(l.outer, "swap"), l.shared);
      const r = await run(l.policy, "echo x > ../shared/PWN");
      assert.match(r.out, REFUSED);
      assert.match(r.out, /writable root/);
      // The advice leads somewhere: a new session refuses a root reached through a link.
      assert.match(r.out, /restore|back\. If you moved it on purpose.*real path/s);
      assert.equal(r.code, undefined, "refused before anything ran");
      assert.deepEqual(await names(l.victim), []);
      // Back in place, commands run again.
      await Deno.rename(l.shared, join(l.outer, "swap"));
      await Deno.rename(join(l.outer, "moved"), l.shared);
      assert.equal((await run(l.policy, "echo x > ../shared/after")).code, 0);
    } finally {
      await Deno.remove(l.base, { recursive: true });
    }
  },
});

for (const direct of [true, false]) {
  Deno.test({
    name: `a writable root swapped with a link in a loop: A's writes never land outside (${
      direct ? "direct" : "supervised"
    } launch)`,
    ignore: !bwrap,
    fn: async () => {
      _pinLaunch({ direct });
      const l = await layout();
      const stop = join(l.base, "stop");
      const swapper = startSwapper(l.outer, "shared", "swap", stop, 2000000);
      try {
        await swapper.swapping();
        const outputs: { out: string; code?: number }[] = [];
        for (let i = 0; i < 30; i++) {
          outputs.push(await run(l.policy, `echo x > ../shared/PWN-${i}`));
        }
        assert.ok(await swapper.stop() > 0, "the swapper ran");
        assert.deepEqual(await names(l.victim), [], "nothing landed outside");
        for (const o of outputs) {
          if (o.code === undefined) {
            // Or the walk for nested repositories refused a tree that kept changing under it.
            assert.match(
              o.out,
              /session started|no longer lies in the directory|failed to set up|kept changing while penguin walked them|while penguin walks them for git repositories/,
            );
          }
        }
      } finally {
        await swapper.close();
        await Deno.remove(l.base, { recursive: true });
        _pinLaunch({});
      }
    },
  });
}

Deno.test("the launcher opens a writable root and checks its inode before bwrap binds it", async () => {
  const dir = await visibleTempDir("penguin-rootswap-");
  try {
    const ino = (await Deno.stat(dir)).ino!;
    const check = async (want: number) =>
      await new Deno.Command("/bin/sh", {
        args: ["-c", `${WS_OPEN}\nrootopen 8 "$1" "$2"`, "sh", dir, String(want)],
        stderr: "piped",
      }).output();
    assert.equal((await check(ino)).code, 0);
    const other = await check(ino + 1);
    assert.notEqual(other.code, 0);
    assert.match(new TextDecoder().decode(other.stderr), /the writable root .* session started in/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("every pinned writable root is bound from its descriptor, and mounts in it through it", () => {
  const plan: SandboxPlan = {
    writableRoots: true,
    roots: ["/w", "/s"],
    protect: ["/s/.git", "/w/penguin.jsonc"],
    protectMissing: [],
    hideDirs: [],
    hideFiles: [],
    network: false,
    workspaceId: { path: "/w", dev: 1, ino: 2 },
    rootIds: [{ path: "/s", dev: 1, ino: 3 }],
    cwd: "/w",
    env: {},
  };
  const args = bwrapMountArgs(plan, 5, [6]).join(" ");
  assert.match(args, /--bind-fd 5 \/w/);
  assert.match(args, /--bind-fd 6 \/s/);
  assert.match(args, /--ro-bind \/proc\/self\/fd\/6\/\.git \/s\/\.git/);
  assert.doesNotMatch(args, /--bind \/s \/s/);
});
