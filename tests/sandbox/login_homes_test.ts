// penguin running as root hides every login account's home from its commands, not only the home
// of a user named by `SUDO_USER`: a user who became root by plain `su` or `sudo -i` leaves no
// variable naming them, and a command running as root reads every file there that others may read
// (attack round 30: plain `su` left the user's home visible). The account comes from a fake
// `/etc/passwd` bind-mounted in a mount namespace of the test's own.
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { loginHomes } from "../../lib/sandbox/_user_homes.ts";
import { REPO } from "../support/cli.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { visibleTempDir } from "./_helpers.ts";
import { FAKE_ACCOUNT_USABLE, runWithAccount } from "../support/fake_account.ts";

const PASSWD = "root:x:0:0:root:/root:/bin/bash\n" +
  "daemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n" +
  "alice:x:1000:1000::/home/alice:/bin/bash\n" +
  "net:x:998:998::/:/usr/sbin/nologin\n" +
  "bob:x:1001:1001::/srv/users/bob/:/bin/sh\n" +
  "nobody:x:65534:65534::/nonexistent:/usr/sbin/nologin\n";

Deno.test("loginHomes: every login account's home but penguin's own, never a system account's", () => {
  assert.deepEqual(loginHomes(PASSWD, "/root"), ["/home/alice", "/srv/users/bob"]);
  assert.deepEqual(loginHomes(PASSWD, "/home/alice"), ["/srv/users/bob"]);
  assert.deepEqual(loginHomes("", "/root"), []);
});

Deno.test({
  name: "as root, a login account's home is hidden from commands without any sudo variable",
  ignore: !bwrap || !FAKE_ACCOUNT_USABLE,
  fn: async () => {
    const base = await visibleTempDir("penguin-login-homes-");
    try {
      const user = join(base, "home", "carol");
      const ws = join(base, "ws");
      await Deno.mkdir(user, { recursive: true });
      await Deno.mkdir(ws);
      await Deno.writeTextFile(join(user, ".npmrc"), "//registry/:_authToken=CAROL-TOKEN\n");
      await Deno.chmod(join(user, ".npmrc"), 0o644);
      const url = (p: string) => JSON.stringify(pathToFileURL(join(REPO, p)).href);
      const script = join(base, "run.ts");
      await Deno.writeTextFile(
        script,
        `import { createPolicy } from ${url("lib/sandbox/policy.ts")};
import { spawnSandboxed } from ${url("lib/sandbox/spawn.ts")};
const [ws, file] = Deno.args;
const policy = createPolicy({ workspace: ws, home: "/root", hostEnv: { PATH: "/usr/bin:/bin", HOME: "/root" } });
let out = "";
const child = await spawnSandboxed({
  shell: "cat " + file + " 2>&1; echo end",
  policy: { ...policy, hideOtherDataRoots: false },
  onOutput: (c) => void (out += c),
});
await child.status;
console.log(JSON.stringify(out));
`,
      );
      const o = await runWithAccount(base, `carol:x:4321:4321::${user}:/bin/bash`, [
        Deno.execPath(),
        "run",
        "-A",
        "--config",
        join(REPO, "deno.json"),
        script,
        ws,
        join(user, ".npmrc"),
      ], { cwd: REPO, env: { SUDO_USER: "", DOAS_USER: "", PKEXEC_UID: "" } });
      const text = new TextDecoder().decode(o.stdout);
      assert.ok(o.success, new TextDecoder().decode(o.stderr));
      const out = JSON.parse(text.trim().split("\n").at(-1)!) as string;
      assert.match(out, /end/);
      assert.doesNotMatch(out, /CAROL-TOKEN/, out);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});
