// What a sealed home's logout, fish and X session files source, and `.bashrc` paths spelled with
// ANSI-C quoting or brace expansion (issue 26, red team X22–X26, X45, X46): a real `penguin run`
// with `--workspace $HOME --allow-home-workspace`. Each sourced file holds a token; the model's
// command neither reads nor rewrites any of them, and `read_file`/`write_file` are refused, while a
// file nothing names stays readable and writable.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { reverse, runInHomeWorkspace } from "./_sealed_home.ts";
import { startupTextPaths } from "../../lib/sandbox/_source_lines.ts";
import { expandBraces } from "../../lib/sandbox/_shell_expand.ts";
import { visibleTempDir } from "../support/roots.ts";
import { resolveWorkspacePath } from "../../lib/tools/workspace_path.ts";

/** File of the home → its line, sourcing `~/env/<name>.sh` (`<name>` the key). */
const FORMS: Record<string, [string, string]> = {
  logout: [".bash_logout", ". ~/env/logout.sh"],
  zlogout: [".zlogout", "source ~/env/zlogout.sh"],
  fish: [".config/fish/config.fish", "source ~/env/fish.sh"],
  fishd: [".config/fish/conf.d/x.fish", "source ~/env/fishd.sh"],
  xsess: [".xsessionrc", ". ~/env/xsess.sh"],
  xprofile: [".xprofile", ". ~/env/xprofile.sh"],
  ansi: [".bashrc", `. "$HOME"/env/$'\\x61'nsi.sh`],
  oct: [".bashrc", `. "$HOME"/env/$'\\157'ct.sh`],
  brace: [".bashrc", ". ~/env/br{ace,}.sh"],
  seq: [".bashrc", ". ~/env/seq{1..3}.sh"],
};
/** Files a brace form names besides its key's. */
const ALSO = ["seq2", "seq3"];
const tokenOf = (n: string) => `Tok${n}Other0123ZZ`;

Deno.test("run: a sealed home hides what its logout, fish and X session files and $'…'/{a,b} words source", async () => {
  const base = await visibleTempDir("penguin-sealed-other-");
  const home = join(base, "home");
  const root = join(base, "data");
  await Deno.mkdir(join(home, "env"), { recursive: true });
  await Deno.mkdir(join(home, ".config", "fish", "conf.d"), { recursive: true });
  const hidden = Object.keys(FORMS).map((n) => n === "seq" ? "seq1" : n).concat(ALSO);
  for (const n of [...hidden, "plain"]) {
    await Deno.writeTextFile(join(home, "env", `${n}.sh`), `export T_${n}=${tokenOf(n)}\n`);
  }
  for (const [file, line] of Object.values(FORMS)) {
    await Deno.writeTextFile(join(home, file), line + "\n", { append: true });
  }
  const server = await startModelServer({
    turns: [
      turn.of(
        item.toolCall("exec_command", {
          cmd: `cd ~ && for f in env/*.sh; do echo "$f: $(rev "$f" 2>&1)"; ` +
            `echo 'touch /tmp/pwned' >> "$f" 2>/dev/null && echo "wrote $f"; done`,
        }, { id: "c1" }),
        item.toolCall("read_file", { file_path: join(home, "env", "logout.sh") }, { id: "c2" }),
        item.toolCall("read_file", { file_path: join(home, "env", "ansi.sh") }, { id: "c3" }),
        item.toolCall("write_file", { file_path: join(home, "env", "brace.sh"), content: "x" }, {
          id: "c4",
        }),
      ),
      turn.text("done"),
    ],
  });
  try {
    const body = await runInHomeWorkspace(root, home, server);
    // A file no startup file names is the workspace's own: readable and writable.
    assert.ok(body.includes(reverse(tokenOf("plain"))), body.slice(-3000));
    assert.ok(body.includes("wrote env/plain.sh"), body.slice(-3000));
    for (const n of hidden) {
      assert.ok(body.includes(`env/${n}.sh`), `${n} listed: ${body.slice(-3000)}`);
      assert.ok(!body.includes(reverse(tokenOf(n))), `${n} was read: ${body.slice(-3000)}`);
      assert.ok(!body.includes(tokenOf(n)), `${n} was read by read_file`);
      assert.ok(!body.includes(`wrote env/${n}.sh`), `${n} was written: ${body.slice(-3000)}`);
      const text = await Deno.readTextFile(join(home, "env", `${n}.sh`));
      assert.equal(text, `export T_${n}=${tokenOf(n)}\n`, n);
    }
  } finally {
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("the file tools refuse to write what a logout or fish file sources, or a brace word names", async () => {
  const base = await visibleTempDir("penguin-other-write-");
  const home = join(base, "home");
  try {
    await Deno.mkdir(join(home, "dot"), { recursive: true });
    await Deno.mkdir(join(home, ".config", "fish"), { recursive: true });
    await Deno.writeTextFile(join(home, ".bash_logout"), ". ~/dot/out.sh\n");
    await Deno.writeTextFile(join(home, ".config", "fish", "config.fish"), "source ~/dot/f.fish\n");
    await Deno.writeTextFile(join(home, ".zshrc"), `. ~/dot/z{a,b}.sh; . ~/dot/$'\\x71'.sh\n`);
    const roots = { workspace: home, home };
    for (const n of ["out.sh", "f.fish", "za.sh", "zb.sh", "q.sh"]) {
      const r = await resolveWorkspacePath(`dot/${n}`, roots, "write");
      assert.equal(r.ok, false, n);
      if (!r.ok) assert.match(r.message, /sourced by a shell startup file/, n);
    }
    assert.equal((await resolveWorkspacePath("dot/other.sh", roots, "write")).ok, true);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("the startup-file lexer decodes $'…' and expands braces as bash does", () => {
  const h = "/home/u";
  const sourced = (text: string) => startupTextPaths(text, h).sourced;
  assert.deepEqual(sourced(`. "$HOME"/env/$'\\x61'nsi.sh`), ["/home/u/env/ansi.sh"]);
  assert.deepEqual(sourced(`. "$HOME"/env/$'\\157'ct.sh`), ["/home/u/env/oct.sh"]);
  assert.deepEqual(sourced(`source ~/$'\\u0065'nv/$'a\\tb\\'c'`), ["/home/u/env/a\tb'c"]);
  assert.deepEqual(sourced(`. $"$HOME/loc.sh"`), ["/home/u/loc.sh"]);
  assert.deepEqual(sourced(". ~/env/br{ace,}.sh"), ["/home/u/env/brace.sh", "/home/u/env/br.sh"]);
  assert.deepEqual(sourced("{ . ${HOME}/g{1..2}; }"), ["/home/u/g1", "/home/u/g2"]);
  assert.deepEqual(sourced("f() { . ~/{a,b/{c,d}}; }"), [
    "/home/u/a",
    "/home/u/b/c",
    "/home/u/b/d",
  ]);
  // Named anywhere: in an assignment, a comment, `~/.pam_environment`'s `@{HOME}`.
  const named = startupTextPaths("X=~/n{x,y} # ~/c{1..2}\nP DEFAULT=@{HOME}/pam", h).named;
  for (const p of ["/home/u/nx", "/home/u/ny", "/home/u/c1", "/home/u/c2", "/home/u/pam"]) {
    assert.ok(named.includes(p), `${p} not in ${named.join(", ")}`);
  }
  assert.deepEqual(expandBraces("x{01..10..3}"), ["x01", "x04", "x07", "x10"]);
  assert.deepEqual(expandBraces("{c..a}"), ["c", "b", "a"]);
  assert.deepEqual(expandBraces("${HOME}/{x}"), ["${HOME}/{x}"]);
  // Bounded: at most 64 words however many groups a word holds.
  assert.equal(expandBraces("{a,b}".repeat(40)).length, 64);
  assert.equal(expandBraces("{1..100000}").length, 64);
});
