// Every name a sealed home's startup files could mean (issue 26 item 4, red team N1–N6, N15–N19,
// N21, N22): a real `penguin run` with `--workspace $HOME --allow-home-workspace` and a `.bashrc`
// whose lines bash reads otherwise than a plain lexer would: a CRLF line (bash sources
// `cr.sh<CR>`), quoted and escaped braces (bash does not expand them: `q{a,b}.sh` is the name),
// missing files named in strings bash runs later (`PROMPT_COMMAND`, `trap`, `alias`, `eval`) and
// sourced after a redirection (`2>/dev/null . ~/x`). The model's command can read none of the
// existing files and create none of the missing ones, while a file nothing names stays its own.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { visibleTempDir } from "../support/roots.ts";
import { reverse, runInHomeWorkspace } from "./_sealed_home.ts";
import { startupTextPaths } from "../../lib/sandbox/_source_lines.ts";

const CR = "\r";

/** `.bashrc` lines; each `~/env` name they mean exists (holding a token) or is missing. */
const BASHRC = [
  `. ~/env/cr.sh${CR}`,
  `. ~/env/crnew.sh${CR}`,
  ". ~/env/q{'a,b'}.sh",
  '. "$HOME/env/qd{a,b}.sh"',
  ". ~/env/e\\{c,d\\}.sh",
  ". ~/env/mq{'a,b'}.sh",
  'PROMPT_COMMAND=". ~/s/pc.sh"',
  'trap ". ~/s/trap.sh" EXIT',
  "alias s='. ~/s/al.sh'",
  'eval ". ~/s/ev.sh 2>/dev/null"',
  "2>/dev/null . ~/s/redir.sh",
  "</dev/null source ~/s/redir2.sh",
];

/** The existing files bash sources, by label. */
const EXISTING: Record<string, string> = {
  cr: `cr.sh${CR}`,
  q: "q{a,b}.sh",
  qd: "qd{a,b}.sh",
  e: "e{c,d}.sh",
};

/** The missing files bash would source (or run later), by label. */
const MISSING: Record<string, string> = {
  crnew: `crnew.sh${CR}`,
  mq: "mq{a,b}.sh",
  pc: "../s/pc.sh",
  trap: "../s/trap.sh",
  al: "../s/al.sh",
  ev: "../s/ev.sh",
  redir: "../s/redir.sh",
  redir2: "../s/redir2.sh",
};

const tokenOf = (n: string) => `Tok${n}Spell0123ZZ`;

/** `name` as a single-quoted shell word, a CR written as `$(printf '\r')` outside the quotes. */
const shellWord = (name: string) => `'${name.replaceAll(CR, `'"$(printf '\\r')"'`)}'`;

/** The command: print each existing file reversed, then try to make each missing one. */
function attack(): string {
  const lines = ["cd ~/env"];
  for (const [n, f] of Object.entries({ ...EXISTING, plain: "plain.sh" })) {
    lines.push(`echo "read-${n}: $(rev < ${shellWord(f)} 2>&1)"`);
  }
  for (const [n, f] of Object.entries({ ...MISSING, newplain: "../s/free.sh" })) {
    lines.push(
      `printf 'touch /tmp/x\\n' > ${shellWord(f)} 2>/dev/null && echo made-${n} || ` +
        `echo refused-${n}`,
    );
  }
  return lines.join("\n");
}

Deno.test("run: a sealed home holds every name its startup files could mean (CRLF, quoted braces, strings, redirections)", async () => {
  const base = await visibleTempDir("penguin-sealed-spell-");
  try {
    const home = join(base, "home");
    const env = join(home, "env");
    await Deno.mkdir(env, { recursive: true });
    // Apart from `env`: a name no stand-in can take keeps its whole directory read-only.
    await Deno.mkdir(join(home, "s"));
    for (const [n, f] of Object.entries({ ...EXISTING, plain: "plain.sh" })) {
      await Deno.writeTextFile(join(env, f), `export T_${n}=${tokenOf(n)}\n`);
    }
    await Deno.writeTextFile(join(home, ".bashrc"), BASHRC.join("\n") + "\n");
    const server = await startModelServer({
      turns: [
        turn.of(item.toolCall("exec_command", { cmd: attack() }, { id: "c1" })),
        turn.text("done"),
      ],
    });
    let body: string;
    try {
      body = await runInHomeWorkspace(join(base, "data"), home, server);
    } finally {
      await server.close();
    }
    // The controls: a file nothing names is readable, and a new one can be made.
    const shown = body.slice(body.indexOf("read-cr"), body.indexOf("read-cr") + 3000);
    assert.ok(body.includes(reverse(tokenOf("plain"))), shown);
    assert.ok(body.includes("made-newplain"), shown);
    for (const n of Object.keys(EXISTING)) {
      assert.ok(body.includes(`read-${n}:`), `${n} listed: ${body.slice(-3000)}`);
      assert.ok(!body.includes(reverse(tokenOf(n))), `${n} (${EXISTING[n]}) was read`);
    }
    for (const [n, f] of Object.entries(MISSING)) {
      assert.ok(body.includes(`refused-${n}`), `${n} (${JSON.stringify(f)}) was made`);
      // The stand-in is gone with the session: nothing is left where the host's bash looks.
      assert.equal(await Deno.lstat(join(env, f)).then(() => true, () => false), false, n);
    }
    for (const n of Object.keys(EXISTING)) {
      const text = await Deno.readTextFile(join(env, EXISTING[n]!));
      assert.equal(text, `export T_${n}=${tokenOf(n)}\n`, `${n} unchanged`);
    }
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("the startup-file lexer gives every spelling a shell could mean", () => {
  const h = "/home/u";
  const named = (text: string, want: string[]) => {
    const got = startupTextPaths(text, h).named;
    for (const p of want) assert.ok(got.includes(p), `${text}: ${p} not in ${got.join(", ")}`);
  };
  // bash keeps a CR in the word; the name without it is taken too.
  assert.deepEqual(startupTextPaths(`. ~/cr.sh${CR}\n`, h).sourced, [`/home/u/cr.sh${CR}`]);
  named(`. ~/cr.sh${CR}\n`, [`/home/u/cr.sh${CR}`, "/home/u/cr.sh"]);
  // Quoted braces are not expanded by bash: the literal name first, the expanded ones too.
  assert.deepEqual(startupTextPaths(". ~/q{'a,b'}.sh", h).sourced, [
    "/home/u/q{a,b}.sh",
    "/home/u/qa.sh",
    "/home/u/qb.sh",
  ]);
  named('. "$HOME/d{a,b}" ~/e\\{c,d\\}', ["/home/u/d{a,b}", "/home/u/da", "/home/u/e{c,d}"]);
  // The word as written, quotes and backslashes kept.
  named("X=~/w\\'x", ["/home/u/w'x", "/home/u/w\\'x"]);
  // Strings bash runs later are read as shell text again.
  named(`eval ". ~/s/q{'a,b'}.sh 2>/dev/null"`, ["/home/u/s/q{a,b}.sh"]);
  named("alias s='. ~/s/\"x y\".sh'", ["/home/u/s/x y.sh"]);
  // After a redirection, a command still starts.
  for (const line of ["2>/dev/null . ~/r", "</dev/null source ~/r", "&>/dev/null . ~/r"]) {
    assert.deepEqual(startupTextPaths(line, h).sourced, ["/home/u/r"], line);
  }
  assert.deepEqual(startupTextPaths(". <(cat ~/p)", h).sourced, []);
  // Bounded: a file naming more paths than penguin holds says so.
  const many = Array.from({ length: 3000 }, (_, i) => `~/m${i}`).join(" ");
  assert.equal(startupTextPaths(many, h).overflow, true);
  assert.equal(startupTextPaths("~/m1 ~/m2", h).overflow, false);
});
