// What the user's `~/.ssh/config` includes and runs from the workspace is read-only to the model's
// commands: the user's next `ssh` or `git fetch` over ssh reads the included file (a `Match exec`
// the model appends runs) and runs the `ProxyCommand` script (issue 26, attack round 18 imports B7).
// The workspace's other files stay writable.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { useTestRunDir } from "../support/run_dir.ts";
import { collect, visibleTempDir } from "./_helpers.ts";

Deno.test("files ~/.ssh/config includes or runs from the workspace are read-only to commands", async () => {
  useTestRunDir();
  const base = await visibleTempDir("penguin-ssh-config-");
  try {
    const home = join(base, "home");
    const ws = join(base, "proj");
    await Deno.mkdir(join(ws, "ssh"), { recursive: true });
    await Deno.mkdir(join(home, ".ssh"), { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(join(ws, "ssh", "extra.conf"), "Host build\n  HostName 127.0.0.1\n");
    await Deno.writeTextFile(join(ws, "ssh", "proxy.sh"), '#!/bin/sh\nexec nc "$1" "$2"\n');
    await Deno.writeTextFile(
      join(home, ".ssh", "config"),
      `Include ${ws}/ssh/extra.conf\nHost jump\n  ProxyCommand ${ws}/ssh/proxy.sh %h %p\n`,
      { mode: 0o600 },
    );
    const policy = createPolicy({
      workspace: ws,
      home,
      hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home },
    });
    const shell = `printf 'Match exec "touch /tmp/x"\\n' >> ssh/extra.conf; ` +
      "echo evil > ssh/proxy.sh; echo evil > ssh/other; echo end";
    const out = (await collect(await spawnSandboxed({ shell, policy, stdin: "null" }))).out;
    assert.match(out, /end/);
    assert.equal(
      await Deno.readTextFile(join(ws, "ssh", "extra.conf")),
      "Host build\n  HostName 127.0.0.1\n",
    );
    assert.equal(
      await Deno.readTextFile(join(ws, "ssh", "proxy.sh")),
      '#!/bin/sh\nexec nc "$1" "$2"\n',
    );
    assert.equal(await Deno.readTextFile(join(ws, "ssh", "other")), "evil\n");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("ssh's glob and relative Includes and %d paths into the workspace are read-only too", async () => {
  // Attack round 18c #20–#25: a file an `Include` glob would match could be added or changed, and
  // `%d` (ssh's home) and an `Include` relative to ~/.ssh were not read.
  useTestRunDir();
  const base = await visibleTempDir("penguin-ssh-config-");
  try {
    const home = join(base, "home");
    const ws = join(home, "proj");
    await Deno.mkdir(join(ws, "ssh"), { recursive: true });
    await Deno.mkdir(join(home, ".ssh"), { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(join(ws, "ssh", "a.conf"), "Host a\n");
    await Deno.writeTextFile(join(ws, "m1.sh"), "#!/bin/sh\n");
    await Deno.writeTextFile(join(ws, "m2.sh"), "#!/bin/sh\n");
    await Deno.writeTextFile(
      join(home, ".ssh", "config"),
      `Include ~/proj/ssh/*.conf\nInclude extra\nMatch exec "%d/proj/m1.sh"\n`,
      { mode: 0o600 },
    );
    await Deno.writeTextFile(join(home, ".ssh", "extra"), `Match exec "${ws}/m2.sh %h"\n`);
    const policy = createPolicy({
      workspace: ws,
      home,
      allowHomeWorkspace: true,
      hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home },
    });
    const shell = "echo evil >> ssh/a.conf; echo evil > ssh/b.conf; echo evil >> m1.sh; " +
      "echo evil >> m2.sh; echo evil > other; echo end";
    const out = (await collect(await spawnSandboxed({ shell, policy, stdin: "null" }))).out;
    assert.match(out, /end/);
    assert.equal(await Deno.readTextFile(join(ws, "ssh", "a.conf")), "Host a\n");
    await assert.rejects(Deno.stat(join(ws, "ssh", "b.conf")), Deno.errors.NotFound);
    assert.equal(await Deno.readTextFile(join(ws, "m1.sh")), "#!/bin/sh\n");
    assert.equal(await Deno.readTextFile(join(ws, "m2.sh")), "#!/bin/sh\n");
    assert.equal(await Deno.readTextFile(join(ws, "other")), "evil\n");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("ssh config paths written $HOME/… or ${HOME}/… are read-only too (round 32 w05)", async () => {
  useTestRunDir();
  const base = await visibleTempDir("penguin-ssh-home-var-");
  try {
    const home = join(base, "home");
    const ws = join(home, "proj");
    await Deno.mkdir(join(ws, "ssh"), { recursive: true });
    await Deno.mkdir(join(home, ".ssh"), { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(join(ws, "ssh", "proxy.sh"), "#!/bin/sh\n");
    await Deno.writeTextFile(join(ws, "ssh", "match.sh"), "#!/bin/sh\n");
    await Deno.writeTextFile(
      join(home, ".ssh", "config"),
      'Match exec "${HOME}/proj/ssh/match.sh"\n  User me\n' +
        "Host jump\n  ProxyCommand $HOME/proj/ssh/proxy.sh %h %p\n",
      { mode: 0o600 },
    );
    const policy = createPolicy({
      workspace: ws,
      home,
      hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home },
    });
    const shell = "echo evil > ssh/proxy.sh; echo evil > ssh/match.sh; echo end";
    const out = (await collect(await spawnSandboxed({ shell, policy, stdin: "null" }))).out;
    assert.match(out, /end/);
    assert.equal(await Deno.readTextFile(join(ws, "ssh", "proxy.sh")), "#!/bin/sh\n");
    assert.equal(await Deno.readTextFile(join(ws, "ssh", "match.sh")), "#!/bin/sh\n");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
