// Detection and the fail-closed rule.
import assert from "node:assert/strict";
import { join } from "node:path";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { createPolicy, detectSandbox, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { exists, SANDBOX_CHECKS } from "./_helpers.ts";
import { withWorkspace } from "../support/roots.ts";

/** Write `script` as an executable fake bubblewrap in `dir`; its path. */
async function fakeBwrap(dir: string, script: string): Promise<string> {
  const fake = join(dir, "bwrap");
  await Deno.writeTextFile(fake, script);
  await Deno.chmod(fake, 0o755);
  return fake;
}

/** `touch ran` sandboxed by bubblewrap `fake` in `<dir>/ws` is refused as `refusal` says; nothing ran. */
async function assertFailsClosed(
  dir: string,
  fake: string,
  refusal: (e: unknown) => boolean,
): Promise<void> {
  const ws = join(dir, "ws");
  await Deno.mkdir(ws);
  const policy = createPolicy({ workspace: ws, home: "", bwrapPath: fake });
  await assert.rejects(spawnSandboxed({ shell: "touch ran", policy }), refusal);
  assert.equal(await exists(join(ws, "ran")), false);
}

Deno.test("detectSandbox finds a working bubblewrap on this machine and explains every check", async () => {
  const report = await detectSandbox();
  assert.equal(report.usable, true, JSON.stringify(report, null, 2));
  assert.equal(report.kind, "bwrap");
  const names = report.checks.map((c) => c.name);
  for (const n of SANDBOX_CHECKS) {
    assert.ok(names.includes(n), n);
    assert.equal(report.checks.find((c) => c.name === n)!.status, "ok", n);
  }
  for (const c of report.checks) {
    assert.ok(c.detail.length > 0, c.name);
    if (c.status !== "ok") assert.ok(c.fix, `${c.name} has no fix`);
  }
  assert.deepEqual(report.seccomp?.installed, true);
  assert.equal(report.seccomp?.arch, Deno.build.arch);
  assert.ok(report.seccomp?.blocks.some((b) => /AF_UNIX/.test(b)));
});

Deno.test("detectSandbox is cached per process", () => {
  assert.equal(detectSandbox(), detectSandbox());
});

Deno.test("a missing bubblewrap is reported with how to install it", async () => {
  const report = await detectSandbox({ bwrapPath: "/nonexistent/bwrap" });
  assert.equal(report.usable, false);
  assert.equal(report.kind, "none");
  const check = report.checks.find((c) => c.name === "bubblewrap")!;
  assert.equal(check.status, "fail");
  assert.match(check.fix!, /apt-get install bubblewrap/);
  assert.match(check.fix!, /--sandbox off/);
});

Deno.test("a bubblewrap that cannot create namespaces is explained", async () => {
  await withWorkspace(async (dir) => {
    const fake = await fakeBwrap(
      dir,
      "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n",
    );
    const report = await detectSandbox({ bwrapPath: fake });
    assert.equal(report.usable, false);
    const start = report.checks.find((c) => c.name === "sandbox start")!;
    assert.equal(start.status, "fail");
    assert.match(start.detail, /setting up uid map/);
    assert.match(start.fix!, /apparmor_restrict_unprivileged_userns/);
  });
});

Deno.test("a bubblewrap that cannot isolate the network is reported as such", async () => {
  await withWorkspace(async (dir) => {
    const fake = await fakeBwrap(
      dir,
      '#!/bin/bash\nfor a; do if [ "$a" = --unshare-net ]; then ' +
        "echo 'bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted' >&2; exit 1; fi; done\n" +
        'exec /usr/bin/bwrap "$@"\n',
    );
    const report = await detectSandbox({ bwrapPath: fake });
    assert.equal(report.usable, false);
    assert.equal(report.checks.find((c) => c.name === "sandbox start")!.status, "ok");
    const net = report.checks.find((c) => c.name === "network isolation")!;
    assert.equal(net.status, "fail");
    assert.match(net.detail, /apparmor_restrict_unprivileged_userns/);
  });
});

Deno.test("a network namespace that fails twice under load does not make the probe fail", async () => {
  await withWorkspace(async (dir) => {
    // The first two starts with --unshare-net fail as a loaded kernel's may; the third works.
    const count = join(dir, "net-starts");
    const fake = await fakeBwrap(
      dir,
      '#!/bin/bash\nfor a; do if [ "$a" = --unshare-net ]; then echo x >> ' + count +
        "; if [ $(wc -l < " + count + ") -le 2 ]; then " +
        "echo 'bwrap: loopback: Failed RTM_NEWADDR: No buffer space available' >&2; exit 1; fi; fi; done\n" +
        'exec /usr/bin/bwrap "$@"\n',
    );
    const report = await detectSandbox({ bwrapPath: fake, refresh: true });
    assert.equal(report.usable, true, report.failure);
    assert.equal(report.checks.find((c) => c.name === "network isolation")!.status, "ok");
    assert.equal((await Deno.readTextFile(count)).split("\n").filter(Boolean).length, 3);
  });
});

Deno.test("a run without network failing three times for another reason is not taken for a missing network namespace", async () => {
  await withWorkspace(async (dir) => {
    // The first three starts with --unshare-net fail as when a path of the plan went away
    // meanwhile (nothing about namespaces); the fourth works.
    const count = join(dir, "net-starts");
    const fake = await fakeBwrap(
      dir,
      '#!/bin/bash\nfor a; do if [ "$a" = --unshare-net ]; then echo x >> ' + count +
        "; if [ $(wc -l < " + count + ") -le 3 ]; then " +
        'echo "bwrap: Can\'t find source path /gone/run-dir: No such file or directory" >&2; ' +
        "exit 1; fi; fi; done\n" +
        'exec /usr/bin/bwrap "$@"\n',
    );
    const report = await detectSandbox({ bwrapPath: fake, refresh: true });
    assert.equal(report.usable, true, report.failure);
    assert.equal(report.checks.find((c) => c.name === "network isolation")!.status, "ok");
    assert.equal((await Deno.readTextFile(count)).split("\n").filter(Boolean).length, 4);
  });
});

Deno.test("a run without network failing three times, not for a path or namespace, is tried once more", async () => {
  await withWorkspace(async (dir) => {
    const count = join(dir, "net-starts");
    const fake = await fakeBwrap(
      dir,
      '#!/bin/bash\nfor a; do if [ "$a" = --unshare-net ]; then echo x >> ' + count +
        "; if [ $(wc -l < " + count + ") -le 3 ]; then " +
        "echo 'bwrap: fork: Resource temporarily unavailable' >&2; exit 1; fi; fi; done\n" +
        'exec /usr/bin/bwrap "$@"\n',
    );
    const report = await detectSandbox({ bwrapPath: fake, refresh: true });
    assert.equal(report.usable, true, report.failure);
    assert.equal((await Deno.readTextFile(count)).split("\n").filter(Boolean).length, 4);
  });
});

Deno.test("a run without network that keeps failing for another reason is reported as that reason", async () => {
  await withWorkspace(async (dir) => {
    const fake = await fakeBwrap(
      dir,
      '#!/bin/bash\nfor a; do if [ "$a" = --unshare-net ]; then ' +
        'echo "bwrap: Can\'t find source path /gone/run-dir: No such file or directory" >&2; ' +
        "exit 1; fi; done\n" +
        'exec /usr/bin/bwrap "$@"\n',
    );
    const report = await detectSandbox({ bwrapPath: fake, refresh: true });
    assert.equal(report.usable, false);
    assert.match(report.failure ?? "", /cannot set up a sandbox: .*\/gone\/run-dir/);
    assert.doesNotMatch(report.failure ?? "", /network namespace/);
  });
});

Deno.test("spawning fails closed when bubblewrap is missing: nothing runs", async () => {
  await withWorkspace(async (ws) => {
    const policy = createPolicy({ workspace: ws, home: "", bwrapPath: "/nonexistent/bwrap" });
    for (const mode of ["workspace-write", "read-only"] as const) {
      await assert.rejects(
        spawnSandboxed({ shell: "touch ran", policy: { ...policy, mode } }),
        (e) => e instanceof PenguinError && e.kind === "runtime" && /--sandbox off/.test(e.message),
      );
      assert.equal(await exists(join(ws, "ran")), false, mode);
    }
    // Opting out runs the command without bubblewrap.
    const child = await spawnSandboxed({ shell: "touch ran", policy: { ...policy, mode: "off" } });
    assert.equal((await child.status).code, 0);
    assert.equal(await exists(join(ws, "ran")), true);
  });
});

Deno.test("spawning fails closed when bubblewrap breaks after detection", async () => {
  await withWorkspace(async (dir) => {
    // Works through the probe (however many tries it takes under load), then fails for every
    // later sandbox: the test breaks it once the detection is done.
    const flag = join(dir, "broken");
    const fake = await fakeBwrap(
      dir,
      `#!/bin/bash\nif [ "$1" = --version ]; then exec /usr/bin/bwrap --version; fi\n` +
        `if [ -e ${flag} ]; then echo 'bwrap: Can not mount tmpfs on /newroot: Operation not permitted' >&2; exit 1; fi\n` +
        `exec /usr/bin/bwrap "$@"\n`,
    );
    assert.equal((await detectSandbox({ bwrapPath: fake })).usable, true);
    await Deno.writeTextFile(flag, "");
    await assertFailsClosed(
      dir,
      fake,
      (e) =>
        e instanceof PenguinError && e.kind === "runtime" && /Can not mount tmpfs/.test(e.message),
    );
  });
});

Deno.test("a bubblewrap that does not install the seccomp filter is not usable", async () => {
  await withWorkspace(async (dir) => {
    // Drops `--seccomp 4`: the probe runs, unfiltered.
    const fake = await fakeBwrap(
      dir,
      `#!/bin/bash\nargs=()\nwhile [ $# -gt 0 ]; do\n` +
        `  if [ "$1" = --seccomp ]; then shift 2; continue; fi\n  args+=("$1"); shift\ndone\n` +
        `exec /usr/bin/bwrap "\${args[@]}"\n`,
    );
    const report = await detectSandbox({ bwrapPath: fake, refresh: true });
    assert.equal(report.usable, false);
    assert.equal(report.seccomp?.installed, false);
    assert.match(report.failure ?? "", /system call filter is not installed/);
    await assertFailsClosed(
      dir,
      fake,
      (e) => e instanceof PenguinError && /system call filter/.test(e.message),
    );
  });
});

Deno.test("spawning fails closed when the seccomp filter cannot be loaded: nothing runs", async () => {
  await withWorkspace(async (dir) => {
    // Passes the probe, then hands bwrap a broken filter (7 bytes) on the fd it is told to read.
    const flag = join(dir, "probed");
    const fake = await fakeBwrap(
      dir,
      `#!/bin/bash\nif [ "$1" = --version ]; then exec /usr/bin/bwrap --version; fi\n` +
        `fd=4 prev=; for a in "$@"; do [ "$prev" = --seccomp ] && fd=$a; prev=$a; done\n` +
        `if [ -e ${flag} ]; then eval "exec /usr/bin/bwrap \\"\\$@\\" $fd< <(printf 'broken!')"; fi\n` +
        `touch ${flag}; exec /usr/bin/bwrap "$@"\n`,
    );
    assert.equal((await detectSandbox({ bwrapPath: fake })).usable, true);
    await assertFailsClosed(
      dir,
      fake,
      (e) => e instanceof PenguinError && e.kind === "runtime" && /seccomp/.test(e.message),
    );
  });
});

Deno.test("a bubblewrap refusing --size (setuid, or before 0.8.0) is used without it, and said so", async () => {
  await withWorkspace(async (dir) => {
    const fake = await fakeBwrap(
      dir,
      '#!/bin/bash\nfor a; do if [ "$a" = --size ]; then ' +
        "echo 'bwrap: The --size option is not permitted in setuid mode' >&2; exit 1; fi; done\n" +
        'exec /usr/bin/bwrap "$@"\n',
    );
    const report = await detectSandbox({ bwrapPath: fake });
    assert.equal(report.usable, true, JSON.stringify(report.checks));
    // A setuid bubblewrap refuses --size alone: --disable-userns is kept.
    assert.equal(report.disableUserns, true);
    assert.equal(report.sizeTmpfs, false);
    const nested = report.checks.find((c) => c.name === "nested user namespaces")!;
    assert.equal(nested.status, "ok");
    const bound = report.checks.find((c) => c.name === "memory-backed files")!;
    assert.equal(bound.status, "warn");
    assert.match(bound.detail, /unbounded/);
    // Commands run, with the flags this bubblewrap takes.
    const ws = join(dir, "ws");
    await Deno.mkdir(ws);
    const policy = createPolicy({ workspace: ws, home: "", bwrapPath: fake });
    const child = await spawnSandboxed({ shell: "touch ran", policy, stdin: "null" });
    assert.equal((await child.status).code, 0);
    assert.equal(await exists(join(ws, "ran")), true);
  });
});
