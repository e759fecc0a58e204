// The machine's own secrets are hidden from commands (lib/sandbox/policy.ts SYSTEM_SECRETS): the
// read-only root showed a command of penguin running as root the password hashes in /etc/shadow
// (attack round 28). /etc/passwd and the rest of /etc stay readable.
import assert from "node:assert/strict";
import { spawnSandboxed } from "../../lib/sandbox/spawn.ts";
import { systemSecrets } from "../../lib/sandbox/policy.ts";
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
