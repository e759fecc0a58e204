// The machine's own secrets are hidden from commands (lib/sandbox/policy.ts SYSTEM_SECRETS): the
// read-only root showed a command of penguin running as root the password hashes in /etc/shadow
// (attack round 28); a backup of it in /var/backups, TLS private keys and debconf's passwords
// (attack round 29 l12). /etc/passwd and the rest of /etc stay readable.
import assert from "node:assert/strict";
import { spawnSandboxed } from "../../lib/sandbox/spawn.ts";
import { rootOnlyEntries, systemSecrets } from "../../lib/sandbox/policy.ts";
import { join } from "node:path";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { withPolicyWorkspace } from "./_helpers.ts";
import { useTestRunDir } from "../support/run_dir.ts";

useTestRunDir();

/** Whether this process can read `path` (root can read /etc/shadow). */
function readable(path: string): boolean {
  try {
    Deno.readFileSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test({
  name: "a command cannot read /etc/shadow that penguin itself could read; /etc/passwd it can",
  ignore: !bwrap || !readable("/etc/shadow"),
  fn: () =>
    withPolicyWorkspace(async (policy) => {
      let out = "";
      const child = await spawnSandboxed({
        shell: "cat /etc/shadow >/dev/null 2>&1 && echo shadow-read; " +
          "grep -c '^root:' /etc/passwd",
        policy: { ...policy, hideOtherDataRoots: false },
        onOutput: (chunk) => void (out += chunk),
      });
      await child.status;
      assert.doesNotMatch(out, /shadow-read/);
      assert.match(out, /^1$/m);
    }),
});

Deno.test("the machine's secrets named are the password files and the SSH host keys", () => {
  const found = systemSecrets();
  assert.ok(found.includes("/etc/shadow") && found.includes("/etc/gshadow"));
  for (const p of found.filter((p) => p.startsWith("/etc/ssh/"))) {
    assert.match(p, /^\/etc\/ssh\/ssh_host_[^/]*_key$/);
  }
});

Deno.test("the entries only root may read are named, a directory whole, never a link", async () => {
  const dir = await Deno.makeTempDir({ prefix: "penguin-root-only-" });
  try {
    const mk = async (name: string, mode: number, kind: "file" | "dir" = "file") => {
      if (kind === "dir") await Deno.mkdir(join(dir, name));
      else await Deno.writeTextFile(join(dir, name), "x");
      await Deno.chmod(join(dir, name), mode);
    };
    await mk("shadow.bak", 0o600);
    await mk("group-readable", 0o640);
    await mk("public", 0o644);
    await mk("private", 0o700, "dir");
    await mk("sub", 0o755, "dir");
    // Another user's, in root's group, which a sandboxed root reads by group (round 30 o05).
    await mk("group-zero", 0o640);
    if (Deno.uid() === 0) await Deno.chown(join(dir, "group-zero"), 1000, 0);
    await Deno.writeTextFile(join(dir, "sub", "deep"), "x");
    await Deno.chmod(join(dir, "sub", "deep"), 0o600);
    await Deno.symlink("shadow.bak", join(dir, "link"));
    const mine = Deno.uid() === 0;
    const found = rootOnlyEntries([dir, join(dir, "missing")]);
    assert.deepEqual(
      found,
      mine
        ? ["group-readable", "group-zero", "private", "shadow.bak"].map((n) => join(dir, n))
        : [],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Whether `path` exists and only its owner and group may read it. */
function rootOnly(path: string): boolean {
  try {
    const info = Deno.lstatSync(path);
    return info.uid === 0 && ((info.mode ?? 0) & 0o004) === 0;
  } catch {
    return false;
  }
}

Deno.test({
  name: "a command of penguin running as root cannot read TLS private keys or debconf's passwords",
  ignore: !bwrap || Deno.uid() !== 0 ||
    !(rootOnly("/etc/ssl/private") || rootOnly("/var/cache/debconf/passwords.dat")),
  fn: () =>
    withPolicyWorkspace(async (policy) => {
      let out = "";
      const child = await spawnSandboxed({
        shell: "ls -A /etc/ssl/private 2>&1 | wc -l; " +
          "cat /var/cache/debconf/passwords.dat >/dev/null 2>&1 && echo passwords-read; " +
          "grep -c '^root:' /etc/passwd",
        policy: { ...policy, hideOtherDataRoots: false },
        onOutput: (chunk) => void (out += chunk),
      });
      await child.status;
      assert.match(out, /^0$/m);
      assert.doesNotMatch(out, /passwords-read/);
      assert.match(out, /^1$/m);
    }),
});
