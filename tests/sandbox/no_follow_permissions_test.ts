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
