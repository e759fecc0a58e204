import assert from "node:assert/strict";
import { workspaceIdentity } from "../../lib/sandbox/workspace_identity.ts";

/** A link directly in "/" on this machine (`/lib -> usr/lib` on Debian), if any. */
function rootLink(): { link: string; real: string } | undefined {
  for (const entry of Deno.readDirSync("/")) {
    if (!entry.isSymlink) continue;
    const link = `/${entry.name}`;
    try {
      if (Deno.statSync(link).isDirectory) return { link, real: Deno.realPathSync(link) };
    } catch {
      // a dangling link: try the next
    }
  }
  return undefined;
}

Deno.test("a workspace reached through a link in / is followed, for root too", () => {
  const found = rootLink();
  if (found === undefined) return; // this machine has no link in "/" to follow
  const id = workspaceIdentity(found.link);
  assert.ok(!("problem" in id), `refused: ${"problem" in id ? id.problem : ""}`);
  assert.equal(id.path, found.real);
});

Deno.test("a workspace reached through a link in a directory the user can write is refused", () => {
  const dir = Deno.makeTempDirSync({ prefix: "penguin-wsid-" });
  try {
    Deno.mkdirSync(`${dir}/real`);
    Deno.symlinkSync(`${dir}/real`, `${dir}/link`);
    const id = workspaceIdentity(`${dir}/link`);
    if (Deno.uid() === 0 || Deno.statSync(dir).uid === Deno.uid()) {
      assert.ok("problem" in id);
      assert.match(id.problem, /symbolic link/);
    }
    const direct = workspaceIdentity(`${dir}/real`);
    assert.ok(!("problem" in direct));
    assert.equal(direct.path, Deno.realPathSync(`${dir}/real`));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
