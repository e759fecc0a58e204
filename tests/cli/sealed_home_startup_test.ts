// Tokens in the shell startup files of a sealed home (issue 26, red team Z19): a real `penguin run`
// with `--workspace $HOME --allow-home-workspace`. `.bashrc`, `.profile`, `.zshrc`, `.cshrc`,
// `.kshrc`, `.tcshrc` and a non-dot file `.bashrc` sources hold tokens; neither the model's command
// nor `read_file` reads any of them, while the shell snapshot still gives the profile's PATH and
// a plain variable.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item } from "../support/model_server.ts";
import { reverse, sealedHomeRun } from "./_sealed_home.ts";

const FILES = [".bashrc", ".profile", ".zshrc", ".cshrc", ".kshrc", ".tcshrc", "env/secrets.sh"];
const tokenOf = (f: string) => `TokIn${f.replace(/[^a-z]/g, "")}ZZZZ0123`;

Deno.test("run: a sealed home's startup files and what they source are hidden from commands and read_file", async () => {
  const body = await sealedHomeRun("penguin-sealed-startup-", async (home) => {
    await Deno.mkdir(join(home, "tools"), { recursive: true });
    for (const f of FILES) {
      await Deno.writeTextFile(join(home, f), `export GITHUB_TOKEN=${tokenOf(f)}\n`);
    }
    await Deno.writeTextFile(
      join(home, ".profile"),
      `export PROFILE_SECRET=${tokenOf(".profile")}\nexport MY_TOOL_HOME=/usr\n` +
        `export PATH="$HOME/tools:$PATH"\n`,
    );
    await Deno.writeTextFile(join(home, ".bashrc"), `. ~/env/secrets.sh\n`, { append: true });
    await Deno.writeTextFile(join(home, "tools", "mytool"), "#!/bin/sh\necho tool-ran\n");
    await Deno.chmod(join(home, "tools", "mytool"), 0o755);
  }, (home) => [
    item.toolCall("exec_command", {
      cmd: `cd ~ && cat ${FILES.join(" ")} 2>&1 | rev; mytool; echo "tool-home=$MY_TOOL_HOME"`,
    }, { id: "c1" }),
    item.toolCall("read_file", { file_path: join(home, ".bashrc") }, { id: "c2" }),
    item.toolCall("read_file", { file_path: join(home, "env", "secrets.sh") }, { id: "c3" }),
  ]);
  assert.ok(body.includes("tool-ran"), body.slice(-3000));
  assert.ok(body.includes("tool-home=/usr"), body.slice(-3000));
  for (const f of FILES) {
    const t = tokenOf(f);
    assert.ok(!body.includes(t), `${f}'s token reached the model`);
    assert.ok(!body.includes(reverse(t)), `${f}'s token reached the model reversed`);
  }
});
