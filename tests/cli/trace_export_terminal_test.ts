// deno-lint-ignore-file no-control-regex
// `penguin trace export` of a session whose model and commands wrote escape sequences (a
// clipboard write, a window title, a screen clear, C1 controls, a carriage-return overwrite):
// shown on a terminal, every format is stripped of them; written to a file or a pipe, the export
// is exact. The terminal is real: util-linux `script` runs penguin on a pseudo-terminal and
// records every byte penguin wrote to it.
import assert from "node:assert/strict";
import { join } from "node:path";
import { inRoot, runCli } from "../support/cli.ts";
import { hasScript, runUnderScript } from "../support/pty_script.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";

/** What a hostile model writes: title, clipboard, clear screen, C1 CSI, a carriage-return overwrite. */
const HOSTILE = "A\x1b]0;pwned-title\x07B\x1b]52;c;cm0gLXJmIH4K\x07C\x1b[2JD\x9b2JE ok\rEVIL\n";
/** The same bytes printed by a command. */
const PRINTF = String
  .raw`printf 'P\033]0;pwned-title\007Q\033]52;c;cm0gLXJmIH4K\007R\033[2JS\302\2332JT ok\rEVIL\n'`;

/** Run penguin with stdout (and stderr) on a pseudo-terminal: every byte the terminal got. */
async function onTerminal(dir: string, args: string[]): Promise<{ code: number; out: string }> {
  const r = await runUnderScript(dir, `terminal-${crypto.randomUUID().slice(0, 8)}.log`, args);
  // The log's last line says it is done; the terminal turns each newline into \r\n (a \r of
  // penguin's own would stay alone).
  const body = r.log.replace(/\nScript done[^\n]*\n?$/, "\n");
  return { code: r.code, out: body.replaceAll("\r\n", "\n") };
}

function assertInert(text: string, what: string): void {
  assert.ok(!text.includes("\x1b"), `${what}: no ESC at all\n${JSON.stringify(text)}`);
  assert.ok(!text.includes("\x07"), `${what}: no BEL\n${JSON.stringify(text)}`);
  assert.ok(!/[\x80-\x9f]/.test(text), `${what}: no C1 controls\n${JSON.stringify(text)}`);
  assert.ok(!text.includes("\r"), `${what}: no carriage return\n${JSON.stringify(text)}`);
  assert.ok(!/[\x00-\x08\x0b-\x1f\x7f]/.test(text.replace(/\t/g, "")), `${what}: no C0 controls`);
}

Deno.test({
  name:
    "trace export to a terminal strips the escape sequences a hostile model and its commands wrote, in every format; to a file or a pipe it is exact",
  ignore: !hasScript,
  async fn() {
    const server = await startModelServer({
      turns: [
        turn.of(
          item.text(HOSTILE),
          item.toolCall("exec_command", { cmd: PRINTF, description: `list ${HOSTILE}` }),
        ),
        turn.text(`done ${HOSTILE}`),
      ],
    });
    const sb = await makeRoot(server);
    try {
      const run = await runCli([...inRoot(sb, "run"), "-m", "Go."]);
      assert.equal(run.code, 0, run.stderr);
      const sid = /--resume (session-\S+)/.exec(run.stderr + run.stdout)?.[1];
      assert.ok(sid, run.stderr);
      for (const format of ["md", "html", "json", "otlp"]) {
        const args = ["--root", sb.root, "trace", "export", sid, "--format", format];
        const extra = format === "otlp" ? ["--include-content"] : [];
        const tty = await onTerminal(sb.base, [...args, ...extra]);
        assert.equal(tty.code, 0, tty.out);
        assertInert(tty.out, `trace export --format ${format} on a terminal`);
        if (format === "md" || format === "html") {
          // The text itself still shows, with the overwrite turned into a line break.
          assert.match(tty.out, /ABCDE ok\nEVIL/, `${format}: the model's text`);
          assert.match(tty.out, /PQRST ok\nEVIL/, `${format}: the command's output`);
        }
        // A pipe gets the export as it is.
        const piped = await runCli([...args, ...extra]);
        assert.equal(piped.code, 0, piped.stderr);
        if (format === "md" || format === "html") {
          assert.ok(piped.stdout.includes("\x1b]52;c;cm0gLXJmIH4K\x07"), `${format}: piped`);
        }
        // A file gets it byte for byte, whatever stdout is.
        const file = join(sb.base, `export.${format}`);
        const toFile = await onTerminal(sb.base, [...args, ...extra, "-o", file]);
        assert.equal(toFile.code, 0, toFile.out);
        assert.equal(await Deno.readTextFile(file), piped.stdout, `${format}: -o is exact`);
      }
    } finally {
      await server.close();
      await sb.cleanup();
    }
  },
});

/** One JSON document, or one per line (JSON Lines). */
function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text.trim().split("\n").map((l) => JSON.parse(l));
  }
}

Deno.test({
  name:
    "JSON written to a terminal (trace show --json, trace export json, sessions list --json) carries C1 controls as \\u escapes, never raw; a pipe gets the same JSON",
  ignore: !hasScript,
  async fn() {
    // An OSC 52 clipboard write, a window title and a screen clear in UTF-8 C1 form, and a DCS.
    const C1_TEXT = "x\u009d52;c;UldO\u009cy\u009d0;pwned\u009cz\u009b2Jw\u0090q\u009c";
    const server = await startModelServer({ turns: [turn.text(C1_TEXT)] });
    const sb = await makeRoot(server);
    try {
      const run = await runCli([...inRoot(sb, "run"), "-m", "Go."]);
      assert.equal(run.code, 0, run.stderr);
      const commands = [
        ["trace", "show", "--json", "latest"],
        ["trace", "export", "latest", "--format", "json"],
        ["sessions", "list", "--json"],
      ];
      for (const args of commands) {
        const tty = await onTerminal(sb.base, ["--root", sb.root, ...args]);
        assert.equal(tty.code, 0, tty.out);
        assert.ok(!/[\x80-\x9f]/.test(tty.out), `${args.join(" ")}: no raw C1 control`);
        const piped = await runCli(["--root", sb.root, ...args]);
        assert.equal(piped.code, 0, piped.stderr);
        // The same JSON either way (an export to a terminal is stripped instead): the escapes
        // decode to the model's text.
        if (args[1] !== "export") {
          assert.deepEqual(jsonOf(tty.out), jsonOf(piped.stdout), args.join(" "));
        }
        if (args[1] === "show") {
          assert.ok(tty.out.includes("x\\u009d52;c;UldO\\u009cy"), tty.out);
          assert.ok(JSON.stringify(jsonOf(tty.out)).includes(C1_TEXT));
        }
      }
    } finally {
      await server.close();
      await sb.cleanup();
    }
  },
});
