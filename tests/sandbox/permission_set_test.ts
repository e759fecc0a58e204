// What penguin's code does under its own permission set (`-P=penguin`, as the binary runs), where
// Deno reads only the environment variables deno.json names and spawns only bash, sh and setpriv.
// The suite's -A hid each of these (attack round 24 perms B1–B5).
import assert from "node:assert/strict";
import { join } from "node:path";
import { canMount, mountTmpfs, umount } from "../support/tmpfs.ts";
import { repoModule, runUnderPermissionSet } from "../support/permission_probe.ts";
import { visibleTempDir } from "./_helpers.ts";

/** Run `source` under the permission set in a fresh directory; its last stdout line as JSON. */
async function probe(
  source: (dir: string) => string,
  env: Record<string, string> = {},
  prepare: (dir: string) => Promise<void> = async () => {},
  cleanup: (dir: string) => Promise<void> = async () => {},
): Promise<unknown> {
  const dir = await visibleTempDir("penguin-permset-");
  try {
    await prepare(dir);
    const out = await runUnderPermissionSet(dir, source(dir), env);
    assert.equal(out.code, 0, out.stderr);
    return JSON.parse(out.stdout.trim().split("\n").at(-1)!);
  } finally {
    await cleanup(dir);
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a directory's walk stamp is the nanosecond one under the permission set", async () => {
  // GNU `stat`, spawned directly, was refused: every stamp fell back to a whole-second ctime and a
  // millisecond mtime, which the directory's owner sets back after a rename into it.
  const stamp = await probe((dir) =>
    `import { stampDirs } from ${repoModule("lib/sandbox/_walk_stamps.ts")};
Deno.mkdirSync(${JSON.stringify(join(dir, "d"))});
const [s] = await stampDirs([${JSON.stringify(join(dir, "d"))}]);
console.log(JSON.stringify(s?.stamp ?? null));
`
  );
  assert.match(String(stamp), /^ns:\d+\.\d{9}$/);
});

Deno.test("every *_API_KEY variable is known under the permission set, not only the catalog's", async () => {
  const keys = await probe(
    () =>
      `import { apiKeyEnv } from ${repoModule("lib/sandbox/api_key_env.ts")};
console.log(JSON.stringify(await apiKeyEnv()));
`,
    { MISTRAL_API_KEY: "mistral-key-0123456789", OPENAI_API_KEY: "openai-key-0123456789" },
  ) as Record<string, string>;
  assert.equal(keys["MISTRAL_API_KEY"], "mistral-key-0123456789");
  assert.equal(keys["OPENAI_API_KEY"], "openai-key-0123456789");
});

Deno.test("the runtime directory's podman logins are hidden under the permission set", async () => {
  const hidden = await probe(
    () =>
      `import { runtimeSecrets } from ${repoModule("lib/sandbox/policy.ts")};
console.log(JSON.stringify(runtimeSecrets(Deno.env.toObject())));
`,
    { XDG_RUNTIME_DIR: "/var/tmp/penguin-xdg-runtime-probe" },
  ) as string[];
  assert.ok(
    hidden.includes("/var/tmp/penguin-xdg-runtime-probe/containers"),
    JSON.stringify(hidden),
  );
});

Deno.test({
  name:
    "GIT_DISCOVERY_ACROSS_FILESYSTEM reads under the permission set: the repository above is guarded",
  ignore: !(await canMount()),
  fn: async () => {
    // A workspace on its own file system inside a repository: git (and penguin) stop at the
    // boundary unless the variable says to go on; unreadable, it counted as unset, and a
    // `core.hooksPath` into the workspace stayed writable.
    const repos = await probe(
      (dir) =>
        `import { enclosingRepos } from ${repoModule("lib/sandbox/git_config_guard.ts")};
console.log(JSON.stringify(enclosingRepos(${JSON.stringify(join(dir, "repo", "ws"))})));
`,
      { GIT_DISCOVERY_ACROSS_FILESYSTEM: "1" },
      async (dir) => {
        await Deno.mkdir(join(dir, "repo", ".git"), { recursive: true });
        await Deno.writeTextFile(join(dir, "repo", ".git", "HEAD"), "ref: refs/heads/main\n");
        await mountTmpfs(join(dir, "repo", "ws"), "64k");
      },
      (dir) => umount(join(dir, "repo", "ws")),
    ) as string[];
    assert.ok(repos.some((r) => r.endsWith("/repo")), JSON.stringify(repos));
  },
});

Deno.test("penguin's bash is looked up once: one a command writes later on PATH is never run", async () => {
  // Under -A (the tests, an SDK embedding) every use looked bash up on PATH again: a workspace
  // directory on PATH (an activated .venv/bin) gave penguin the model's bash, run on the host.
  const dir = await visibleTempDir("penguin-findbash-");
  try {
    const bin = join(dir, "bin");
    await Deno.mkdir(bin);
    const script = join(dir, "probe.ts");
    await Deno.writeTextFile(
      script,
      `import { findBash } from ${repoModule("lib/sandbox/_executables.ts")};
const first = await findBash();
Deno.writeTextFileSync(${
        JSON.stringify(join(bin, "bash"))
      }, "#!/bin/sh\\necho model\\n", { mode: 0o755 });
console.log(JSON.stringify([first, await findBash()]));
`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "-A", "--no-config", script],
      env: { PATH: `${bin}:/usr/bin:/bin` },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const [first, second] = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.notEqual(first, join(bin, "bash"));
    assert.equal(second, first);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
