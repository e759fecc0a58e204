import assert from "node:assert/strict";
import {
  pinShells,
  workspaceIdentities,
  workspaceIdentity,
} from "../../lib/sandbox/workspace_identity.ts";
import { createPolicy } from "../../lib/sandbox/policy.ts";

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

Deno.test("a session's roots are pinned down by one shell, the workspace not again when given", () => {
  const dir = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "penguin-wsids-" }));
  try {
    const [ws, a, b, c] = ["ws", "a", "b", "c"].map((n) => `${dir}/${n}`);
    for (const d of [ws, a, b]) Deno.mkdirSync(d!);
    const before = pinShells();
    const ids = workspaceIdentities([ws!, a!, c!, b!]);
    assert.equal(pinShells() - before, 1, "one shell for all four");
    for (const [i, d] of [[0, ws], [1, a], [3, b]] as const) {
      const id = ids[i]!;
      assert.ok(!("problem" in id), `${d}: ${"problem" in id ? id.problem : ""}`);
      const info = Deno.statSync(d!);
      assert.deepEqual(id, { path: d, dev: info.dev, ino: info.ino });
    }
    assert.ok("problem" in ids[2]!, "a missing one cannot be entered");

    const session = workspaceIdentity(ws!);
    assert.ok(!("problem" in session));
    const given = pinShells();
    const policy = createPolicy({
      workspace: ws!,
      workspaceId: session,
      scratchpad: a!,
      revealWritable: [b!],
      home: "",
      hostEnv: { PATH: "/usr/bin:/bin" },
    });
    assert.equal(pinShells() - given, 1, "the workspace given, the other roots in one shell");
    assert.deepEqual(policy.workspaceId, session);
    assert.deepEqual(Object.keys(policy.rootIds ?? {}), [a, b]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
