// Hard links of any file of a hidden home, at any depth (issue 26 item 4, attack pass final8
// P12, P15, P16): a real `penguin run` with a temp HOME whose `.vimrc`, a hook of git's
// `init.templateDir` (`~/.git-templates`, copied into every new repository) and a key 5 levels
// down `~/.ssh` have second names in a workspace outside the home. Neither commands nor the file
// tools can write the host's files through them or read the key; a plain workspace file stays
// writable.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item } from "../support/model_server.ts";
import { outputsOf, runCalls, withHomeBase } from "../support/home_run.ts";

const KEY = "TokDeepSshKeyAnyDepthZZ";
const reverse = (s: string) => [...s].reverse().join("");
/** What the command said of each file (for a failure's message). */
const said = (body: string) => (body.match(/(wrote|refused) [\w-]+/g) ?? []).join(", ");

/** The home's files, each written once and linked into `ws` under the name given. */
async function plantLinks(home: string, ws: string): Promise<Record<string, string>> {
  await Deno.mkdir(home, { recursive: true });
  await Deno.writeTextFile(
    join(home, ".gitconfig"),
    "[user]\n\tname = u\n[init]\n\ttemplateDir = ~/.git-templates\n",
  );
  const files: Record<string, [string, string]> = {
    vimrc: [".vimrc", "set nocompatible\n"],
    "post-checkout": [".git-templates/hooks/post-checkout", "#!/bin/sh\nexit 0\n"],
    key: [".ssh/a/b/c/d/key", `${KEY}\n`],
  };
  const texts: Record<string, string> = {};
  for (const [name, [rel, text]] of Object.entries(files)) {
    const path = join(home, rel);
    await Deno.mkdir(join(path, ".."), { recursive: true });
    await Deno.writeTextFile(path, text);
    await Deno.link(path, join(ws, name));
    texts[path] = text;
  }
  await Deno.writeTextFile(join(ws, "plain"), "plain\n");
  return texts;
}

const WRITES = "rev key; for f in vimrc post-checkout plain; do " +
  'echo "touch /tmp/PWNED" >> $f 2>/dev/null && echo "wrote $f" || echo "refused $f"; done';

Deno.test("run: second names of ~/.vimrc, an init.templateDir hook and a deep ~/.ssh key are read-only or hidden to commands", async () => {
  await withHomeBase("penguin-hldeep-", async (run) => {
    const texts = await plantLinks(run.home, run.ws);
    const call = item.toolCall("exec_command", { cmd: WRITES }, { id: "c1" });
    const body = JSON.stringify(await runCalls(run, [call]));
    assert.ok(body.includes("wrote plain"), said(body));
    for (const f of ["vimrc", "post-checkout"]) {
      assert.ok(body.includes(`refused ${f}`), said(body));
    }
    assert.ok(!body.includes(KEY) && !body.includes(reverse(KEY)), "the key reached the model");
    for (const [path, text] of Object.entries(texts)) {
      assert.equal(await Deno.readTextFile(path), text, path);
    }
  });
});

Deno.test("run --sandbox off: file tools refuse the second names of ~/.vimrc, an init.templateDir hook and a deep key", async () => {
  await withHomeBase("penguin-hldeep-ft-", async (run) => {
    const texts = await plantLinks(run.home, run.ws);
    const write = (f: string, id: string) =>
      item.toolCall("write_file", { file_path: f, content: "touch /tmp/X\n" }, { id });
    const calls = [
      item.toolCall("read_file", { file_path: "key" }, { id: "r1" }),
      write("vimrc", "w1"),
      write("post-checkout", "w2"),
      write("plain", "w3"),
    ];
    const sent = await runCalls({ ...run, flags: ["--sandbox", "off"] }, calls);
    assert.ok(!JSON.stringify(sent).includes(KEY), "the key reached the model");
    const out = outputsOf(sent);
    assert.match(out["r1"] ?? "", /Refusing to read "key": .*other name .*key/);
    assert.match(out["w1"] ?? "", /Refusing to write "vimrc": .*other name .*\.vimrc/);
    assert.match(
      out["w2"] ?? "",
      /Refusing to write "post-checkout": .*other name .*post-checkout/,
    );
    assert.match(out["w3"] ?? "", /Overwrote "plain"/);
    for (const [path, text] of Object.entries(texts)) {
      assert.equal(await Deno.readTextFile(path), text, path);
    }
  });
});
