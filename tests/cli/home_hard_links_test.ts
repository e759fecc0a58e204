// Hard links of the home's protected files in a workspace that is not a sealed home (issue 26
// item 4, attack pass final7 N9–N14): a real `penguin run` with a temp HOME whose `.bashrc`,
// `.gitconfig`, `core.hooksPath` hook, `~/.local/bin` program and `~/.ssh/id_ed25519` have
// second names in the workspace (outside the home, or `~/dotfiles`, on the same file system).
// Commands cannot write the host's files through them nor read the key; a plain file of the
// workspace stays writable.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { addServerModel, visibleTempDir } from "../support/roots.ts";

const KEY = "TokSshKeyHardLinkZZ";
const reverse = (s: string) => [...s].reverse().join("");
/** What the command said of each file (for a failure's message). */
const said = (body: string) => (body.match(/(wrote|refused) [\w-]+/g) ?? []).join(", ");

/** The home's files, each written once and linked into `ws` under the name given. */
async function plantLinks(home: string, ws: string): Promise<Record<string, string>> {
  const files: Record<string, [string, string]> = {
    bashrc: [".bashrc", "export B=1\n"],
    gitconfig: [".gitconfig", "[user]\n\tname = u\n[core]\n\thooksPath = ~/.config/git/hooks\n"],
    "pre-push": [".config/git/hooks/pre-push", "#!/bin/sh\nexit 0\n"],
    tool: [".local/bin/tool", "#!/bin/sh\necho tool\n"],
    id_ed25519: [".ssh/id_ed25519", `${KEY}\n`],
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

const WRITES = "rev id_ed25519; for f in bashrc gitconfig pre-push tool plain; do " +
  'echo "touch /tmp/PWNED" >> $f 2>/dev/null && echo "wrote $f" || echo "refused $f"; done';

/** One run in `ws` with `home` as HOME; returns what the model was shown of its command. */
async function runIn(base: string, home: string, ws: string, extra: string[]): Promise<string> {
  const server = await startModelServer({
    turns: [
      turn.of(item.toolCall("exec_command", { cmd: WRITES }, { id: "c1" })),
      turn.text("done"),
    ],
  });
  try {
    const root = join(base, "data");
    await addServerModel(root, server);
    const path = `${join(home, ".local", "bin")}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`;
    const r = await runCli(["--root", root, "run", "--workspace", ws, ...extra, "-m", "go"], {
      env: { HOME: home, PATH: path },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests.length, 2);
    return JSON.stringify(server.requests[1]!.body);
  } finally {
    await server.close();
  }
}

for (const where of ["outside the home", "~/dotfiles"]) {
  Deno.test(`run: second names of the home's startup files, git files, programs and key are read-only or hidden (workspace ${where})`, async () => {
    const base = await visibleTempDir("penguin-hardlink-");
    try {
      const home = join(base, "home");
      const ws = where === "~/dotfiles" ? join(home, "dotfiles") : join(base, "ws");
      await Deno.mkdir(ws, { recursive: true });
      const texts = await plantLinks(home, ws);
      const body = await runIn(base, home, ws, []);
      assert.ok(body.includes("wrote plain"), said(body));
      for (const f of ["bashrc", "gitconfig", "pre-push", "tool"]) {
        assert.ok(body.includes(`refused ${f}`), said(body));
      }
      assert.ok(!body.includes(KEY) && !body.includes(reverse(KEY)), "the key reached the model");
      for (const [path, text] of Object.entries(texts)) {
        assert.equal(await Deno.readTextFile(path), text, path);
      }
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  });
}

Deno.test("run --sandbox read-only: a second name of ~/.ssh/id_ed25519 in the workspace is not read", async () => {
  const base = await visibleTempDir("penguin-hardlink-ro-");
  try {
    const home = join(base, "home");
    const ws = join(base, "ws");
    await Deno.mkdir(ws, { recursive: true });
    await plantLinks(home, ws);
    const body = await runIn(base, home, ws, ["--sandbox", "read-only"]);
    assert.ok(body.includes("refused plain"), said(body));
    assert.ok(!body.includes(KEY) && !body.includes(reverse(KEY)), "the key reached the model");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
