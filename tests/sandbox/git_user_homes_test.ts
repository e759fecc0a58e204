// The user's other homes (issue 26 XC3): the global git configuration of the
// account's home from /etc/passwd and of SUDO_USER's home counts besides
// $HOME's, since the user's later shell may have either as its HOME.
import assert from "node:assert/strict";
import { join } from "node:path";
import { elevatingUser, passwdHomes, sudoUserHome } from "../../lib/sandbox/_user_homes.ts";
import { gitConfigTargets } from "../../lib/sandbox/git_config_guard.ts";
import { findGitLayout } from "../../lib/sandbox/git_guard.ts";

const PASSWD = [
  "root:x:0:0:root:/root:/bin/bash",
  "alice:x:1000:1000:Alice:/home/alice/:/bin/bash",
  "daemon:x:1:1::/:/usr/sbin/nologin",
  "broken line",
  "bob:x:1001:1001::relative:/bin/sh",
].join("\n");

Deno.test("passwdHomes: the uid's home, then SUDO_USER's, absolute and not /", () => {
  assert.deepEqual(passwdHomes(PASSWD, 1000, undefined), ["/home/alice"]);
  assert.deepEqual(passwdHomes(PASSWD, 0, "alice"), ["/root", "/home/alice"]);
  assert.deepEqual(passwdHomes(PASSWD, 0, "root"), ["/root"]);
  assert.deepEqual(passwdHomes(PASSWD, 1, "bob"), []);
  assert.deepEqual(passwdHomes(PASSWD, null, "nobody"), []);
});

Deno.test("sudoUserHome: a login account's home under sudo, never a system account's", () => {
  const passwd = PASSWD + "\nbin:x:2:2::/bin:/usr/sbin/nologin\nweb:x:33:33::/var/www:/bin/sh\n" +
    "carol:x:1002:1002::/srv/carol:/bin/sh";
  assert.equal(sudoUserHome(passwd, "alice", "/root"), "/home/alice");
  assert.equal(sudoUserHome(passwd, "carol", "/root"), "/srv/carol");
  // Not under sudo, an unknown user, a system account, a home of one level or not absolute.
  assert.equal(sudoUserHome(passwd, undefined, "/root"), undefined);
  assert.equal(sudoUserHome(passwd, "mallory", "/root"), undefined);
  assert.equal(sudoUserHome(passwd, "bin", "/root"), undefined);
  assert.equal(sudoUserHome(passwd, "web", "/root"), undefined);
  assert.equal(sudoUserHome(passwd, "daemon", "/root"), undefined);
  assert.equal(sudoUserHome(passwd, "bob", "/root"), undefined);
  // penguin's own home is hidden by the home rule already.
  assert.equal(sudoUserHome(passwd, "alice", "/home/alice/"), undefined);
});

Deno.test("elevatingUser: sudo's, doas's or pkexec's invoking user (round 30 o05)", () => {
  const env = (vars: Record<string, string>) => (name: string) => vars[name];
  assert.equal(elevatingUser(PASSWD, env({ SUDO_USER: "alice" })), "alice");
  assert.equal(elevatingUser(PASSWD, env({ DOAS_USER: "alice" })), "alice");
  assert.equal(elevatingUser(PASSWD, env({ PKEXEC_UID: "1000" })), "alice");
  assert.equal(elevatingUser(PASSWD, env({ PKEXEC_UID: "4242" })), undefined);
  assert.equal(elevatingUser(PASSWD, env({})), undefined);
});

Deno.test("gitConfigTargets: another home's core.hooksPath counts besides $HOME's", async () => {
  const base = await Deno.realPath(await Deno.makeTempDir());
  try {
    const ws = join(base, "ws");
    for (const d of ["objects", "refs"]) await Deno.mkdir(join(ws, ".git", d), { recursive: true });
    await Deno.writeTextFile(join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
    for (const h of ["ha", "hb"]) await Deno.mkdir(join(base, h));
    await Deno.writeTextFile(join(base, "ha", ".gitconfig"), "[core]\n\thooksPath = tools/hk\n");
    const layout = await findGitLayout(ws);
    const env = (n: string) => n === "PATH" ? "" : undefined;
    const hooksOf = async (otherHomes: string[]) =>
      (await gitConfigTargets(ws, layout, "read-only", {
        home: join(base, "hb"),
        otherHomes,
        env,
        enclosing: false,
      })).filter((t) => t.key === "core.hooksPath" && !t.why).map((t) => t.path);
    assert.deepEqual(await hooksOf([]), []);
    assert.deepEqual(await hooksOf([join(base, "ha")]), [join(ws, "tools", "hk")]);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
