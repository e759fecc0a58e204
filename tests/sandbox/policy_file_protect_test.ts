// The workspace's penguin.jsonc is read-only to the model: neither the file
// tools nor sandboxed commands can change or replace it.
import assert from "node:assert/strict";
import { createPolicy, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import {
  createEditFileTool,
  createWriteFileTool,
  DEFAULT_TOOL_DEFINITIONS,
} from "../../lib/tools/mod.ts";
import { run } from "../tools/_support.ts";
import { collect } from "./_helpers.ts";
import { withWorkspace } from "../support/roots.ts";

const POLICY = '{ "sandbox": "read-only" }\n';

function definition(name: string) {
  return DEFAULT_TOOL_DEFINITIONS.find((d) => d.name === name)!;
}

Deno.test("file tools refuse to write or edit the workspace's penguin.jsonc", async () => {
  await withWorkspace(async (ws) => {
    await Deno.writeTextFile(`${ws}/penguin.jsonc`, POLICY);
    const write = await run(createWriteFileTool(definition("write_file")), {
      file_path: "penguin.jsonc",
      content: "{}",
    }, { ws });
    const edit = await run(createEditFileTool(definition("edit_file")), {
      file_path: "penguin.jsonc",
      old_string: "read-only",
      new_string: "workspace-write",
    }, { ws });
    assert.equal(write.status, "failed");
    assert.equal(edit.status, "failed");
    assert.equal(await Deno.readTextFile(`${ws}/penguin.jsonc`), POLICY);
  });
});

Deno.test("sandboxed commands cannot overwrite, replace or remove the workspace's penguin.jsonc", async () => {
  await withWorkspace(async (ws) => {
    await Deno.writeTextFile(`${ws}/penguin.jsonc`, POLICY);
    const policy = createPolicy({ workspace: ws });
    const attempts = [
      "echo '{}' > penguin.jsonc",
      "rm -f penguin.jsonc",
      "mv penguin.jsonc old.jsonc",
      "printf '{}' > new.jsonc && mv -f new.jsonc penguin.jsonc",
    ];
    for (const cmd of attempts) {
      await collect(await spawnSandboxed({ shell: cmd, policy }));
      assert.equal(await Deno.readTextFile(`${ws}/penguin.jsonc`), POLICY, cmd);
    }
    // The rest of the workspace stays writable.
    const ok = await collect(await spawnSandboxed({ shell: "echo hi > other.txt", policy }));
    assert.equal(ok.code, 0);
    assert.equal(await Deno.readTextFile(`${ws}/other.txt`), "hi\n");
  });
});

Deno.test("a workspace without penguin.jsonc cannot get one from a command (it would set the next session's git access and writable roots)", async () => {
  await withWorkspace(async (ws) => {
    const policy = createPolicy({ workspace: ws });
    const attempts = [
      `printf '{ "git": "writable" }' > penguin.jsonc`,
      "printf '{}' > new.jsonc && mv -f new.jsonc penguin.jsonc",
      "rm -f penguin.jsonc && mkfifo penguin.jsonc",
      "ln -sf /dev/zero penguin.jsonc",
    ];
    for (const cmd of attempts) {
      const r = await collect(await spawnSandboxed({ shell: cmd, policy }));
      assert.notEqual(r.code, 0, `${cmd}: ${r.out}`);
      await assert.rejects(Deno.lstat(`${ws}/penguin.jsonc`), Deno.errors.NotFound, cmd);
    }
    // What a command sees meanwhile is an empty policy.
    const seen = await collect(await spawnSandboxed({ shell: "cat penguin.jsonc", policy }));
    assert.match(seen.out, /^\/\/ .*\n\{\}\n$/);
    // A read-only sandbox writes nothing, so it needs no stand-in.
    const ro = createPolicy({ workspace: ws, mode: "read-only" });
    const none = await collect(await spawnSandboxed({ shell: "ls -A", policy: ro }));
    assert.doesNotMatch(none.out, /penguin\.jsonc/);
  });
});

Deno.test("a symlinked penguin.jsonc is refused in a writable sandbox (a command could replace the link); read-only runs", async () => {
  await withWorkspace(async (ws) => {
    await Deno.mkdir(`${ws}/cfg`);
    await Deno.writeTextFile(`${ws}/cfg/policy.jsonc`, '{ "network": "off" }\n');
    await Deno.symlink("cfg/policy.jsonc", `${ws}/penguin.jsonc`);
    const policy = createPolicy({ workspace: ws });
    await assert.rejects(
      spawnSandboxed({ shell: "rm penguin.jsonc && printf '{}' > penguin.jsonc", policy }),
      /penguin\.jsonc" is a symbolic link, and a command could replace it/,
    );
    assert.ok((await Deno.lstat(`${ws}/penguin.jsonc`)).isSymlink);
    const ro = createPolicy({ workspace: ws, mode: "read-only" });
    const r = await collect(await spawnSandboxed({ shell: "cat penguin.jsonc", policy: ro }));
    assert.equal(r.code, 0, r.out);
  });
});
