// What a sealed home's startup files name anywhere (issue 26, red team N21, N32): a real
// `penguin run` with `--workspace $HOME --allow-home-workspace` and a `.bashrc` reaching files in
// the home with a line continuation after `.`/`source`, a process substitution, a stdin redirect,
// `eval "$(cat …)"`, a `${VAR:-$HOME/…}` default, the home's absolute path, an assignment and a
// comment. Each file holds a token; neither the model's command nor `read_file` reads any of them
// (nor a file one of them sources), while a file nothing names stays readable.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item } from "../support/model_server.ts";
import { visibleTempDir } from "../support/roots.ts";
import { listEnvFiles, reverse, sealedHomeRun, writeTokenFiles } from "./_sealed_home.ts";
import { startupTextPaths } from "../../lib/sandbox/_source_lines.ts";
import { resolveWorkspacePath } from "../../lib/tools/workspace_path.ts";

/** `.bashrc` lines, `HOMEDIR` standing for the home's absolute path. */
const FORMS: Record<string, string> = {
  contdot: ". \\\n  ~/env/contdot.sh",
  contsrc: "source \\\n  ~/env/contsrc.sh",
  procsub: ". <(cat ~/env/procsub.sh)",
  stdin: "source /dev/stdin < ~/env/stdin.sh",
  evalcat: 'eval "$(cat "$HOME/env/evalcat.sh")"',
  xdg: '. "${XDG_CONFIG_HOME:-$HOME/env}/xdg.sh"',
  abs: "[ -r HOMEDIR/env/abs.sh ] && . /dev/stdin <HOMEDIR/env/abs.sh",
  assign: "TOKFILE=~/env/assign.sh; export TOKEN=$(<$TOKFILE)",
  comment: "# the token is in ~/env/comment.sh",
};
/** Sourced by `procsub.sh`, itself only named. */
const DEEP = "deep";
const tokenOf = (n: string) => `Tok${n}Named0123ZZ`;

Deno.test("run: a sealed home hides the files its startup files name, in any form", async () => {
  const body = await sealedHomeRun("penguin-sealed-named-", async (home) => {
    await writeTokenFiles(home, [...Object.keys(FORMS), DEEP, "plain"], tokenOf);
    await Deno.writeTextFile(join(home, "env", "procsub.sh"), `. ~/env/${DEEP}.sh\n`, {
      append: true,
    });
    const bashrc = Object.values(FORMS).join("\n").replaceAll("HOMEDIR", home) + "\n";
    await Deno.writeTextFile(join(home, ".bashrc"), bashrc);
  }, (home) => [
    listEnvFiles(),
    item.toolCall("read_file", { file_path: join(home, "env", "procsub.sh") }, { id: "c2" }),
    item.toolCall("read_file", { file_path: join(home, "env", "contdot.sh") }, { id: "c3" }),
  ]);
  // A file no startup file names is the workspace's own: readable.
  assert.ok(body.includes(reverse(tokenOf("plain"))), body.slice(-3000));
  for (const n of [...Object.keys(FORMS), DEEP]) {
    assert.ok(body.includes(`env/${n}.sh`), `${n} listed: ${body.slice(-3000)}`);
    assert.ok(!body.includes(reverse(tokenOf(n))), `${n} (${FORMS[n] ?? "deep"}) was read`);
    assert.ok(!body.includes(tokenOf(n)), `${n} (${FORMS[n] ?? "deep"}) was read by read_file`);
  }
});

Deno.test("the startup-file lexer joins continued lines and finds home paths in any word", () => {
  const h = "/home/u";
  const paths = (text: string) => startupTextPaths(text, h);
  assert.deepEqual(paths(". \\\n  ~/a\nsource \\\n\t$HOME/b").sourced, ["/home/u/a", "/home/u/b"]);
  assert.deepEqual(paths('so\\\nurce "${HOME}/c \\\nd"').sourced, ["/home/u/c d"]);
  // A backslash kept by an escape or single quotes does not continue the line.
  assert.deepEqual(paths("echo \\\\\n. ~/e").sourced, ["/home/u/e"]);
  assert.deepEqual(paths("echo '\\\n. ~/f'").sourced, []);
  // Every path a word names, cut at each character that may end it: the files among them are hidden.
  const names = (text: string, want: string[]) => {
    const got = paths(text).named;
    for (const p of want) assert.ok(got.includes(p), `${text}: ${p} not in ${got.join(", ")}`);
  };
  names(". <(cat ~/p/x.sh) # see ~/p/y", ["/home/u/p/x.sh", "/home/u/p/y"]);
  names("source /dev/stdin < ~/s", ["/home/u/s"]);
  names('eval "$(cat "$HOME/e1")"; x=`cat ${HOME%/}/e2`', ["/home/u/e1", "/home/u/e2"]);
  names("export P=~/b1:$HOME/b2,/home/u/b3", ["/home/u/b1", "/home/u/b2", "/home/u/b3"]);
  names(`. "\${XDG_X:-$HOME/.config}/x.sh"; alias q='~/q "a b"'`, [
    "/home/u/.config/x.sh",
    "/home/u/q",
    '/home/u/q "a b"',
  ]);
  // Other variables, globs, another user's home and paths leaving the home are not named.
  assert.deepEqual(
    paths(". $DOT/x; . ~/env/*.sh; . ~bob/x; . ~/../v/x; . ~/$N.sh; . /home/uv/x").named,
    [],
  );
});

Deno.test("the file tools refuse to write a file a startup file names without sourcing it", async () => {
  const base = await visibleTempDir("penguin-named-write-");
  const home = join(base, "home");
  try {
    await Deno.mkdir(join(home, "dot"), { recursive: true });
    await Deno.writeTextFile(join(home, ".bashrc"), ". <(cat ~/dot/p.sh)\n");
    await Deno.writeTextFile(join(home, "dot", "p.sh"), "export A=1\n");
    await Deno.writeTextFile(join(home, "dot", "other.sh"), "export B=1\n");
    for (const ws of [home, join(home, "dot")]) {
      const roots = { workspace: ws, home };
      const rel = (n: string) => ws === home ? `dot/${n}` : n;
      const r = await resolveWorkspacePath(rel("p.sh"), roots, "write");
      assert.equal(r.ok, false, ws);
      if (!r.ok) assert.match(r.message, /named by a shell startup file/);
      assert.equal((await resolveWorkspacePath(rel("other.sh"), roots, "write")).ok, true, ws);
    }
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
