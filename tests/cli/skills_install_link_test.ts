// `skills install <link>` reads what the link named when penguin resolved it (attack round 29
// k01): the refusal of a source a running session's commands may write resolved the link once, and
// the install then read every file through the link again, which the model had re-pointed at a
// directory of links to the user's SSH key. Here a watcher re-points the link as soon as the
// install opens the directory it named; the skill still holds that directory's files, under the
// link's name.
import assert from "node:assert/strict";
import { join } from "node:path";
import { visibleTempDir } from "../support/roots.ts";
import { runCli } from "../support/cli.ts";

const python = await Deno.stat("/usr/bin/python3").then(() => true, () => false);

Deno.test({
  name: "skills install of a link reads the directory it named, even when re-pointed meanwhile",
  ignore: !python || Deno.build.os !== "linux",
  fn: async () => {
    const base = await visibleTempDir("penguin-skill-link-");
    const root = join(base, "data");
    const named = join(base, "named");
    const other = join(base, "other");
    const link = join(base, "sk");
    await Deno.mkdir(named);
    await Deno.mkdir(other);
    for (const dir of [named, other]) {
      await Deno.writeTextFile(join(dir, "SKILL.md"), "---\ndescription: d\n---\nhi\n");
    }
    for (let i = 0; i < 200; i++) {
      const f = `f${String(i).padStart(3, "0")}`;
      await Deno.writeTextFile(join(named, f), "named\n".repeat(4000));
      await Deno.writeTextFile(join(other, f), "other\n");
    }
    await Deno.symlink(named, link);
    // Re-points the link at `other` once the install opens `named` (inotify, no polling).
    const watcher = new Deno.Command("python3", {
      args: [
        "-c",
        `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
assert libc.inotify_add_watch(fd, sys.argv[1].encode(), 0x20) >= 0
print("ready", flush=True)
os.read(fd, 4096)
os.symlink(sys.argv[2], sys.argv[3] + ".new")
os.rename(sys.argv[3] + ".new", sys.argv[3])
print("flipped", flush=True)`,
        named,
        other,
        link,
      ],
      stdout: "piped",
    }).spawn();
    try {
      const reader = watcher.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let said = "";
      while (!said.includes("ready\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        said += value;
      }
      assert.equal(said, "ready\n");
      const r = await runCli(["--root", root, "skills", "install", link]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /Installed skill sk \(201 files\)/);
      const skill = join(root, "default_project/agents/default_agent/agent_state/skills/sk");
      for (const f of ["f000", "f199"]) {
        assert.ok((await Deno.readTextFile(join(skill, f))).startsWith("named\n"), f);
      }
      assert.equal(await Deno.readLink(link), other, "the watcher re-pointed the link");
    } finally {
      try {
        watcher.kill("SIGKILL");
      } catch {
        // Ended already.
      }
      await watcher.status;
      await Deno.remove(base, { recursive: true });
    }
  },
});

Deno.test("skills install refuses a source whose path cannot be resolved (round 30 p01)", async () => {
  const base = await visibleTempDir("penguin-skill-loop-");
  try {
    // A link loop: realpath fails (ELOOP), as for a tree deeper than its limit, which open still
    // follows; read by name, the source went through a link re-pointed after the check.
    await Deno.symlink(join(base, "b"), join(base, "a"));
    await Deno.symlink(join(base, "a"), join(base, "b"));
    const r = await runCli(["--root", join(base, "data"), "skills", "install", join(base, "a")]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /skills install: cannot install ".*\/a": its path cannot be resolved/);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
