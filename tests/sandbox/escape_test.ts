// Classic escape attempts from inside the sandbox, judged by their effect on the host.
import assert from "node:assert/strict";
import { join } from "node:path";
import { type SandboxPolicy, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { REPO } from "../support/cli.ts";
import { collect, exists, withPolicyWorkspace } from "./_helpers.ts";

async function sh(policy: SandboxPolicy, script: string) {
  return await collect(
    await spawnSandboxed({ argv: ["bash", "-c", script], policy, stdin: "null" }),
  );
}

Deno.test("mount and unshare fail inside, and the root stays read-only after trying", async () => {
  await withPolicyWorkspace(async (policy, ws) => {
    const marker = join("/var/tmp", `penguin-escape-${crypto.randomUUID()}`);
    const r = await sh(
      policy,
      `mount -o remount,rw / 2>/dev/null; echo remount=$?
       mount -t tmpfs none /mnt 2>/dev/null; echo mount=$?
       unshare -U -r true 2>/dev/null; echo unshare_user=$?
       unshare -m true 2>/dev/null; echo unshare_mount=$?
       unshare -n true 2>/dev/null; echo unshare_net=$?
       touch ${marker} 2>/dev/null; echo touch=$?`,
    );
    for (
      const step of ["remount", "mount", "unshare_user", "unshare_mount", "unshare_net", "touch"]
    ) {
      const m = r.out.match(new RegExp(`^${step}=(\\d+)$`, "m"));
      assert.ok(m && m[1] !== "0", `${step} succeeded: ${r.out}`);
    }
    assert.equal(await exists(marker), false);
    assert.equal(await exists(join(ws, "..", "mnt")), false);
  });
});

Deno.test("the child has no capabilities even when penguin runs as root", async () => {
  await withPolicyWorkspace(async (policy) => {
    const r = await sh(policy, "grep -E '^Cap(Eff|Prm|Bnd):' /proc/self/status");
    const caps = [...r.out.matchAll(/^Cap\w+:\s+([0-9a-f]+)$/gm)].map((m) => m[1]);
    assert.equal(caps.length, 3);
    for (const c of caps) assert.match(c!, /^0+$/);
  });
});

Deno.test("host processes are invisible and cannot be killed from inside", async () => {
  await withPolicyWorkspace(async (policy) => {
    const victim = new Deno.Command("sleep", {
      args: ["1000"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      const r = await sh(
        policy,
        `kill -9 ${Deno.pid} ${victim.pid}; echo kill=$?; ls /proc | grep -c '^[0-9]'`,
      );
      assert.match(r.out, /^kill=1$/m);
      // Both are still alive: signal 0 probes existence.
      Deno.kill(Deno.pid, "SIGCONT");
      Deno.kill(victim.pid, "SIGCONT");
      assert.ok(Number(r.out.trim().split("\n").at(-1)) < 10, `too many PIDs visible: ${r.out}`);
    } finally {
      victim.kill("SIGKILL");
      await victim.status;
    }
  });
});

// The limit only binds unprivileged users: the kernel exempts uid 0 from
// RLIMIT_NPROC. As root the test therefore runs the bomb from a helper process
// started as `nobody`, which uses the same spawn API.
Deno.test("a fork bomb is held at the process limit", async () => {
  const dir = await Deno.makeTempDir({ prefix: "penguin-nproc-" });
  try {
    await Deno.chmod(dir, 0o777);
    const helper = join(REPO, "tests/sandbox/_nproc_helper.ts");
    const deno = ["run", "-A", "--no-lock", "--no-config", helper, dir, "40"];
    let out: string;
    if (Deno.uid() === 0) {
      const setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].find((p) => {
        try {
          return Deno.statSync(p).isFile;
        } catch {
          return false;
        }
      });
      if (!setpriv) return; // cannot drop privileges to test it
      const o = await new Deno.Command(setpriv, {
        args: ["--reuid=65534", "--regid=65534", "--clear-groups", Deno.execPath(), ...deno],
        clearEnv: true,
        env: {
          PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
          DENO_DIR: join(dir, ".deno"),
          HOME: dir,
          NO_COLOR: "1",
        },
        stdout: "piped",
        stderr: "piped",
      }).output();
      out = new TextDecoder().decode(o.stdout) + new TextDecoder().decode(o.stderr);
    } else {
      const o = await new Deno.Command(Deno.execPath(), {
        args: deno,
        stdout: "piped",
        stderr: "piped",
      }).output();
      out = new TextDecoder().decode(o.stdout) + new TextDecoder().decode(o.stderr);
    }
    const forked = Number(out.match(/forked=(\d+)/)?.[1]);
    const procs = Number(out.match(/procs=(\d+)/)?.[1]);
    assert.ok(forked > 0 && forked < 300, `the bomb was not stopped: ${out}`);
    assert.ok(procs <= 40, `more processes than the limit: ${out}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the kernel's settings under /proc/sys stay out of reach, even when penguin runs as root", async () => {
  await withPolicyWorkspace(async (policy) => {
    const before = await Deno.readTextFile("/proc/sys/vm/swappiness");
    // Writing the value back changes nothing on the host, but succeeds where /proc/sys is writable
    // (as root a command could then set kernel.core_pattern, which the host runs as root).
    const r = await sh(
      policy,
      `v=$(cat /proc/sys/vm/swappiness); echo "$v" > /proc/sys/vm/swappiness; echo sys=$?
       echo x > /proc/sysrq-trigger 2>/dev/null; echo sysrq=$?`,
    );
    assert.match(r.out, /sys=[1-9]/, r.out);
    assert.match(r.out, /sysrq=[1-9]/, r.out);
    assert.equal(await Deno.readTextFile("/proc/sys/vm/swappiness"), before);
  });
});
