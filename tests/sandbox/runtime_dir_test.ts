// The user's runtime directory ($XDG_RUNTIME_DIR, /run/user/<uid>) is hidden from commands when it
// is one as the XDG specification has it (the user's, mode 0700): a Kerberos ticket cache, a
// keyring, flatpak and gvfs state there were read (attack round 29 l18), where only podman's
// logins (`containers`) were hidden. A directory named so that is not private (a shared one set
// by mistake) keeps only `containers` hidden.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy } from "../../lib/sandbox/policy.ts";
import { spawnSandboxed } from "../../lib/sandbox/spawn.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { visibleTempDir } from "./_helpers.ts";
import { useTestRunDir } from "../support/run_dir.ts";

useTestRunDir();

async function seen(runtime: string, ws: string): Promise<string> {
  const policy = createPolicy({
    workspace: ws,
    home: "",
    hostEnv: { PATH: Deno.env.get("PATH") ?? "", HOME: ws, XDG_RUNTIME_DIR: runtime },
  });
  let out = "";
  const child = await spawnSandboxed({
    shell: `cat ${runtime}/krb5cc ${runtime}/containers/auth.json 2>/dev/null; echo end`,
    policy: { ...policy, hideOtherDataRoots: false },
    onOutput: (chunk) => void (out += chunk),
  });
  await child.status;
  return out;
}

Deno.test({
  name: "a private runtime directory is hidden whole; a shared one keeps only containers hidden",
  ignore: !bwrap,
  fn: async () => {
    const base = await visibleTempDir("penguin-runtime-dir-");
    try {
      const ws = join(base, "ws");
      await Deno.mkdir(ws);
      for (const [name, mode] of [["private", 0o700], ["shared", 0o755]] as const) {
        const dir = join(base, name);
        await Deno.mkdir(join(dir, "containers"), { recursive: true });
        await Deno.chmod(dir, mode);
        await Deno.writeTextFile(join(dir, "krb5cc"), `ticket-${name}\n`);
        await Deno.writeTextFile(join(dir, "containers", "auth.json"), `login-${name}\n`);
      }
      const priv = await seen(join(base, "private"), ws);
      assert.doesNotMatch(priv, /ticket|login/, priv);
      assert.match(priv, /end/);
      const shared = await seen(join(base, "shared"), ws);
      assert.match(shared, /ticket-shared/);
      assert.doesNotMatch(shared, /login/, shared);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});
