// What a sealed home's startup files source, in the forms real startup files use (issue 26, red
// team Y8c, Y8e): a real `penguin run` with `--workspace $HOME --allow-home-workspace`, a `.bashrc`
// pulling in files with nvm's `\. f`, `builtin source f`, `command . f`, `source -- f`,
// `. "$HOME"/f`, `. "${HOME}/f"` and `[ -s f ] && . f`. Each file holds a token; the model's
// command reads none of them, while a file nothing sources stays readable.
import assert from "node:assert/strict";
import { join } from "node:path";
import { listEnvFiles, reverse, sealedHomeRun, writeTokenFiles } from "./_sealed_home.ts";
import { sourcedOnLine } from "../../lib/sandbox/_source_lines.ts";

const FORMS: Record<string, string> = {
  nvm: "[ -s ~/env/nvm.sh ] && \\. ~/env/nvm.sh",
  builtin: "builtin source ~/env/builtin.sh",
  command: "command . ~/env/command.sh",
  dashdash: "source -- ~/env/dashdash.sh",
  quoted: '. "$HOME"/env/quoted.sh',
  braced: 'if true; then . "${HOME}/env/braced.sh"; fi',
  pct: '. "${HOME%/}/env/pct.sh"',
  colq: ". ${HOME:?}/env/colq.sh",
};
const tokenOf = (n: string) => `Tok${n}Src0123ZZ`;

Deno.test("run: a sealed home hides what its startup files source with builtin, command, \\., -- and quoted $HOME", async () => {
  const body = await sealedHomeRun("penguin-sealed-source-", async (home) => {
    await writeTokenFiles(home, [...Object.keys(FORMS), "plain"], tokenOf);
    await Deno.writeTextFile(join(home, ".bashrc"), Object.values(FORMS).join("\n") + "\n");
  }, () => [listEnvFiles()]);
  // A file no startup file sources is the workspace's own: readable.
  assert.ok(body.includes(reverse(tokenOf("plain"))), body.slice(-3000));
  for (const n of Object.keys(FORMS)) {
    assert.ok(body.includes(`env/${n}.sh`), `${n} listed: ${body.slice(-3000)}`);
    assert.ok(!body.includes(reverse(tokenOf(n))), `${n} (${FORMS[n]}) was read`);
  }
});

Deno.test("the startup-file lexer finds source lines in their shell forms and nothing else", () => {
  const h = "/home/u";
  const cases: [string, string[]][] = [
    ["[ -s ~/a ] && \\. ~/a", ["/home/u/a"]],
    ["builtin source ~/b; command -p . ~/c", ["/home/u/b", "/home/u/c"]],
    ['source -- "${HOME}/d e.sh"', ["/home/u/d e.sh"]],
    ["FOO=1 . $HOME/f", ["/home/u/f"]],
    ['. "${HOME%/}/g"; . ${HOME:?}/h; . ${HOME:-/x}/i; . ${HOME%%/}/j', [
      "/home/u/g",
      "/home/u/h",
      "/home/u/i",
      "/home/u/j",
    ]],
    [". ${HOMEDIR}/k; . ${HOME_X:-/y}/l; . ${#HOME}/m", []],
    ["echo . ~/no; source $NVM_DIR/nvm.sh; . ~/dir/*.sh; alias x='. ~/al'", []],
  ];
  for (const [line, want] of cases) assert.deepEqual(sourcedOnLine(line, h), want, line);
});
