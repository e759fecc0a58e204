// Rough CLI edges (issue 13): Deno's own warnings, closed pipes, typos and help pointers.
import assert from "node:assert/strict";
import { join } from "node:path";
import { penguinArgv, REPO, runCli } from "../support/cli.ts";
import { sid, traceBuilder, tracesDay, withTempDir } from "../inspect/_support.ts";
import { selfArgv } from "../../lib/tools/host/self.ts";

async function stderrOf(argv: string[], cwd = REPO): Promise<string> {
  const out = await new Deno.Command(argv[0]!, {
    args: argv.slice(1),
    cwd,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stderr);
}

Deno.test("Deno's experimental-permissions warning never reaches the user", async () => {
  const viaTask = await stderrOf([Deno.execPath(), "task", "penguin", "--version"]);
  assert.doesNotMatch(viaTask, /experimental|Warning/);
  const viaTests = await runCli(["--version"]);
  assert.equal(viaTests.stderr, "");
  const viaSelf = await stderrOf(selfArgv(["--version"]));
  assert.equal(viaSelf, "");
});

/**
 * Run `penguin <args>` with stdout on a pipe, read its first line, then close
 * the pipe's reading end and wait for the exit. The output is larger than a
 * pipe buffer (64 KiB), so penguin is bound to write after the reader is gone.
 */
async function readOneLineThenClose(
  args: string[],
): Promise<{ code: number; first: string; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...penguinArgv(), ...args],
    cwd: REPO,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const errText = new Response(child.stderr).text();
  const reader = child.stdout.getReader();
  let buf = "";
  const dec = new TextDecoder();
  while (!buf.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
  }
  await reader.cancel();
  const status = await child.status;
  return { code: status.code, first: buf.split("\n")[0]!, stderr: await errText };
}

Deno.test("a closed stdout (| head) ends quietly with exit 0: models list, config model list, trace show", async () => {
  await withTempDir(async (root) => {
    // Enough configured models that the listings outgrow a pipe buffer.
    let toml = "";
    for (let i = 0; i < 700; i++) {
      toml += `[[models]]\nprovider = "custom"\nmodel_id = "model-${String(i).padStart(4, "0")}-${
        "x".repeat(60)
      }"\nclient_type = "openai-chat"\nbase_url = "http://127.0.0.1:9/v1"\n\n`;
    }
    await Deno.mkdir(join(root, "default_project"), { recursive: true });
    await Deno.writeTextFile(join(root, "default_project", ".project_config.toml"), toml);
    const b = traceBuilder(sid("0000beef")).meta().tools();
    for (let i = 0; i < 400; i++) {
      b.user(`question ${i} ${"y".repeat(200)}`).begin().text("ok").end();
    }
    const trace = join(await tracesDay(root), `${sid("0000beef")}_001.jsonl`);
    await Deno.writeTextFile(trace, b.jsonl());
    for (
      const args of [
        ["models", "list"],
        ["config", "model", "list"],
        ["trace", "show", trace],
        ["trace", "show", "--json", trace],
      ]
    ) {
      for (let attempt = 0; attempt < 3; attempt++) {
        const r = await readOneLineThenClose(["--root", root, ...args]);
        assert.notEqual(r.first, "", args.join(" "));
        assert.equal(r.stderr, "", `${args.join(" ")}: ${r.stderr}`);
        assert.equal(r.code, 0, args.join(" "));
      }
    }
  });
});
