// penguin runs under its permission set (`-P=penguin` in deno.json, as the binary does), and there
// Deno opens a path's resolved form to check it against the permissions: `O_NOFOLLOW` is not
// honoured, and every "not through a link" read of penguin followed links (attack round 23
// concgit: a shown file swapped for a link had `~/.ssh/id_rsa` copied). The tests run with `-A`,
// where the flag works, so this one runs its reads in a child under the permission set itself.
import assert from "node:assert/strict";
import { join } from "node:path";
import { repoModule, runUnderPermissionSet } from "../support/permission_probe.ts";
import { visibleTempDir } from "./_helpers.ts";

Deno.test("reads that must not follow a link refuse one under penguin's own permission set", async () => {
  const dir = await visibleTempDir("penguin-nofollow-");
  try {
    await Deno.writeTextFile(join(dir, "secret"), "SECRET-CONTENT\n");
    await Deno.writeTextFile(join(dir, "plain"), "plain\n");
    await Deno.symlink(join(dir, "secret"), join(dir, "link"));
    const out = await runUnderPermissionSet(
      dir,
      `import { openableNow, readRegularNow } from ${repoModule("lib/sandbox/_look.ts")};
const show = (r: unknown) => r instanceof Uint8Array ? new TextDecoder().decode(r).trim() : String(r);
console.log(JSON.stringify({
  link: show(readRegularNow(${JSON.stringify(join(dir, "link"))}, 1000, false)),
  plain: show(readRegularNow(${JSON.stringify(join(dir, "plain"))}, 1000, false)),
  followed: show(readRegularNow(${JSON.stringify(join(dir, "link"))}, 1000, true)),
  openable: String(openableNow(${JSON.stringify(join(dir, "link"))})),
}));
`,
    );
    const text = out.stdout;
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(JSON.parse(text), {
      link: "other",
      plain: "plain",
      followed: "SECRET-CONTENT",
      openable: "undefined",
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a no-follow open never opens what a link names (a FIFO's writer stays waiting)", async () => {
  // Where Deno honours O_NOFOLLOW (-A) the link is refused by the kernel: its target, which may be a
  // device whose opening alone does something, is not opened first and checked after (attack
  // round 24 perms a19). Opening a FIFO for reading is what lets a waiting writer go on.
  const { openNoFollowNow } = await import("../../lib/sandbox/_look.ts");
  const { closeSync, constants, openSync, readSync } = await import("node:fs");
  const dir = await visibleTempDir("penguin-nofollow-fifo-");
  try {
    const fifo = join(dir, "fifo");
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.ok(made.success);
    await Deno.symlink(fifo, join(dir, "link"));
    const writer = new Deno.Command("sh", {
      args: ["-c", 'exec 3>"$0"; echo hi >&3', fifo],
      stdout: "null",
      stderr: "null",
    }).spawn();
    assert.throws(
      () => openNoFollowNow(join(dir, "link"), constants.O_RDONLY | constants.O_NONBLOCK),
      (err: { code?: string }) => err.code === "ELOOP",
    );
    // Still waiting: the first reader is this one, and it reads what the writer then writes.
    const fd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      assert.equal((await writer.status).code, 0);
      const buf = new Uint8Array(16);
      const n = readSync(fd, buf, 0, buf.length, null);
      assert.equal(new TextDecoder().decode(buf.subarray(0, n)), "hi\n");
    } finally {
      closeSync(fd);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
