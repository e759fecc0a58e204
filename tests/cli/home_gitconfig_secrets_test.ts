// Tokens in the user's ~/.gitconfig (issue 26 item 4, red team Z2): a real `penguin run` with a
// temp HOME, once with the home sealed as the workspace (--allow-home-workspace) and once with
// the workspace outside it. The config holds a token in a `url.<x>.insteadOf` URL and in
// `http.extraHeader`; commands see a sanitized copy instead: `git config user.email` still
// answers, while neither token reaches the model, plain or reversed, through git, `rev` or
// read_file, and the real file is unchanged.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { addServerModel, visibleTempDir } from "../support/roots.ts";

const URL_TOKEN = "ghp_Ur1Lt0Ke9nX8wY7vZ6uT5sR4";
const HEADER_TOKEN = "hdr_Be4Ar3Er2Qw1Ty0Ui9Op8As7";
const GITCONFIG = `[user]\n\tname = Ann Example\n\temail = ann@example.test\n` +
  `[init]\n\tdefaultBranch = trunk\n` +
  `[url "https://ann:${URL_TOKEN}@github.com/"]\n\tinsteadOf = https://github.com/\n` +
  `[http]\n\textraHeader = Authorization: Bearer ${HEADER_TOKEN}\n` +
  `[credential]\n\thelper = store\n[alias]\n\tsh = !sh -c 'echo x'\n`;

const reverse = (s: string) => [...s].reverse().join("");

for (const sealed of [true, false]) {
  Deno.test(`run: ~/.gitconfig tokens stay hidden, its identity works (${sealed ? "sealed home workspace" : "workspace outside the home"})`, async () => {
    const base = await visibleTempDir("penguin-gitconfig-");
    const home = join(base, "home");
    const root = join(base, "data");
    const ws = sealed ? home : join(base, "ws");
    await Deno.mkdir(join(home, "proj"), { recursive: true });
    await Deno.mkdir(ws, { recursive: true });
    await Deno.writeTextFile(join(home, ".gitconfig"), GITCONFIG);
    const rel = sealed ? ".gitconfig" : join(home, ".gitconfig");
    const server = await startModelServer({
      turns: [
        turn.of(
          item.toolCall("exec_command", {
            cmd: 'echo "email=$(git config user.email) branch=$(git config init.defaultBranch)"; ' +
              "git config --global --list | rev; rev ~/.gitconfig; cat ~/.gitconfig | base64",
          }, { id: "c1" }),
          item.toolCall("read_file", { file_path: rel }, { id: "c2" }),
        ),
        turn.text("done"),
      ],
    });
    try {
      await addServerModel(root, server);
      const r = await runCli([
        "--root",
        root,
        "run",
        "--workspace",
        ws,
        ...(sealed ? ["--allow-home-workspace"] : []),
        "-m",
        "go",
      ], { env: { HOME: home } });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(server.requests.length, 2);
      const body = JSON.stringify(server.requests[1]!.body);
      assert.ok(body.includes("email=ann@example.test branch=trunk"), body.slice(-3000));
      const b64 = (s: string) => btoa(s);
      for (const token of [URL_TOKEN, HEADER_TOKEN]) {
        assert.ok(!body.includes(token), `${token.slice(0, 4)} reached the model`);
        assert.ok(
          !body.includes(reverse(token)),
          `${token.slice(0, 4)} reached the model reversed`,
        );
      }
      // Nothing of the dropped sections survives in any form (base64 of the whole file included).
      assert.ok(!body.includes(b64(GITCONFIG).slice(0, 40)), "the real file reached the model");
      assert.ok(!body.includes("tfosbuhtig") && !body.includes("rehctsbad"), body.slice(-3000));
      assert.equal(await Deno.readTextFile(join(home, ".gitconfig")), GITCONFIG);
    } finally {
      await server.close();
      await Deno.remove(base, { recursive: true });
    }
  });
}
