// Files a home's secret directories link into the workspace (a dotfiles manager's
// `~/.ssh/id_ed25519 -> ~/dotfiles/ssh/id_ed25519`) are hidden where they lie, as the directories
// are: the model read the key there and rewrote the kube config, whose `exec` ran at the user's
// next `kubectl` (attack round 25 concgit c08, c12, c19). The rest of the workspace, and what
// `~/.config`'s settings (not its credentials) link to, stays visible.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { useTestRunDir } from "../support/run_dir.ts";
import { collect, visibleTempDir } from "./_helpers.ts";

Deno.test("what a home's secret directories link into the workspace is hidden there", async () => {
  useTestRunDir();
  const base = await visibleTempDir("penguin-secret-links-");
  try {
    const home = join(base, "home");
    const ws = join(home, "dotfiles");
    for (const d of ["ssh", "kube", "gh", "nvim"]) {
      await Deno.mkdir(join(ws, d), { recursive: true });
    }
    for (const d of [".ssh", ".kube", ".config/nvim"]) {
      await Deno.mkdir(join(home, d), { recursive: true });
    }
    await Deno.writeTextFile(join(ws, "ssh", "id_ed25519"), "SSH-KEY-MARKER\n");
    await Deno.writeTextFile(join(ws, "kube", "config"), "kind: Config # KUBE-MARKER\n");
    await Deno.writeTextFile(join(ws, "gh", "hosts.yml"), "oauth_token: GH-MARKER\n");
    await Deno.writeTextFile(join(ws, "nvim", "init.lua"), "-- settings\n");
    await Deno.symlink("../dotfiles/ssh/id_ed25519", join(home, ".ssh", "id_ed25519"));
    await Deno.symlink("../dotfiles/kube/config", join(home, ".kube", "config"));
    await Deno.symlink(join(ws, "gh"), join(home, ".config", "gh"));
    await Deno.symlink(join(ws, "nvim", "init.lua"), join(home, ".config", "nvim", "init.lua"));
    const policy = createPolicy({
      workspace: ws,
      home,
      hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home },
    });
    const shell = "cat ssh/id_ed25519 kube/config gh/hosts.yml nvim/init.lua 2>&1; " +
      "echo 'users: [exec]' >> kube/config 2>&1; echo end";
    const out = (await collect(await spawnSandboxed({ shell, policy, stdin: "null" }))).out;
    assert.match(out, /end/);
    assert.match(out, /-- settings/, "a settings file ~/.config links to stays readable");
    for (const marker of ["SSH-KEY-MARKER", "KUBE-MARKER", "GH-MARKER"]) {
      assert.equal(out.includes(marker), false, `${marker} shown:\n${out}`);
    }
    assert.equal(
      await Deno.readTextFile(join(ws, "kube", "config")),
      "kind: Config # KUBE-MARKER\n",
    );
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
