// Hard links of the home's protected files in the workspace, reached by penguin's own file tools
// (issue 26 item 4): a real `penguin run` with a temp HOME whose `~/.ssh/id_ed25519` and `.bashrc`
// have second names in a workspace outside the home. read_file of the key's other name is refused
// and the key never reaches the model; write_file and edit_file of the `.bashrc` name are refused
// and the host's `.bashrc` keeps its text and its link. A pair of hard links of an ordinary
// workspace file stay writable, and write_file and edit_file replace the name written without
// changing the other one.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item } from "../support/model_server.ts";
import { outputsOf, runCalls, withHomeBase } from "../support/home_run.ts";

const KEY = "TokSshKeyFileToolLinkQQ";
const BASHRC = "export B=1\n";

for (const sandbox of ["workspace-write", "off"]) {
  Deno.test(`run --sandbox ${sandbox}: file tools refuse the other names of ~/.ssh/id_ed25519 and ~/.bashrc in the workspace`, async () => {
    await withHomeBase("penguin-hlfile-", async ({ root, home, ws }) => {
      await Deno.mkdir(join(home, ".ssh"), { recursive: true });
      const key = join(home, ".ssh", "id_ed25519");
      const bashrc = join(home, ".bashrc");
      await Deno.writeTextFile(key, `${KEY}\n`);
      await Deno.writeTextFile(bashrc, BASHRC);
      await Deno.link(key, join(ws, "id_ed25519"));
      await Deno.link(bashrc, join(ws, "bashrc"));
      // Two names of an ordinary workspace file: not protected, and a write must not reach `b`.
      await Deno.writeTextFile(join(ws, "a"), "one\n");
      await Deno.link(join(ws, "a"), join(ws, "b"));
      const sent = await runCalls({ root, home, ws, flags: ["--sandbox", sandbox] }, [
        item.toolCall("read_file", { file_path: "id_ed25519" }, { id: "r1" }),
        item.toolCall("write_file", { file_path: "bashrc", content: "touch /tmp/X\n" }, {
          id: "w1",
        }),
        item.toolCall("edit_file", {
          file_path: "bashrc",
          old_string: "export B=1",
          new_string: "touch /tmp/X",
        }, { id: "e1" }),
        item.toolCall("write_file", { file_path: "a", content: "two\n" }, { id: "w2" }),
        item.toolCall("edit_file", { file_path: "b", old_string: "one", new_string: "three" }, {
          id: "e2",
        }),
      ]);
      const body = JSON.stringify(sent);
      assert.ok(!body.includes(KEY), "the key reached the model");
      const out = outputsOf(sent);
      // In the OS sandbox the name is covered by /dev/null already (the tool host sees a device).
      assert.match(
        out["r1"] ?? "",
        sandbox === "off"
          ? /Refusing to read "id_ed25519": .*other name .*id_ed25519/
          : /Cannot read "id_ed25519": it is not a regular file/,
      );
      assert.match(out["w1"] ?? "", /Refusing to write "bashrc": .*other name .*\.bashrc/);
      assert.match(out["e1"] ?? "", /Refusing to edit "bashrc": .*other name .*\.bashrc/);
      assert.match(out["w2"] ?? "", /Overwrote "a"/);
      assert.equal(await Deno.readTextFile(bashrc), BASHRC);
      assert.equal((await Deno.stat(bashrc)).nlink, 2, "the host's .bashrc lost its other name");
      assert.equal(await Deno.readTextFile(join(ws, "a")), "two\n");
      assert.match(out["e2"] ?? "", /Replaced 1 occurrence in "b"/);
      assert.equal(await Deno.readTextFile(join(ws, "b")), "three\n");
    });
  });
}
