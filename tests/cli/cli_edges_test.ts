// Rough CLI edges (issue 13): Deno's own warnings, closed pipes, typos and help pointers.
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO, runCli, spawnCli } from "../support/cli.ts";
import { sid, traceBuilder, tracesDay, withTempDir } from "../inspect/_support.ts";
import { selfArgv } from "../../lib/tools/host/self.ts";
import { allCommands } from "../../lib/cli/registry.ts";
import { assertSnapshot } from "../support/snapshot.ts";

const snap = (name: string) => new URL(`./__snapshots__/${name}.txt`, import.meta.url);

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
  const child = spawnCli([...args]);
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

const COMMANDS = await allCommands();

Deno.test("a mistyped command or flag gets a did-you-mean", async () => {
  const cases: [string[], string][] = [
    [["sesions"], `penguin: unknown command "sesions"; did you mean "sessions"?`],
    [["rn"], `penguin: unknown command "rn"; did you mean "run"?`],
    [
      ["sessions", "shwo"],
      `penguin: unknown command "sessions shwo"; did you mean "sessions show"?`,
    ],
    [
      ["config", "modle", "list"],
      `penguin: unknown command "config modle"; did you mean "config model"?`,
    ],
    [
      ["run", "--max-turn", "3", "-m", "x"],
      `penguin: run: Unknown option '--max-turn'; did you mean --max-turns?`,
    ],
    [
      ["trace", "show", "--ful", "x"],
      `penguin: trace show: Unknown option '--ful'; did you mean --full?`,
    ],
    [
      ["help", "trace", "shwo"],
      `penguin: no help for "trace shwo": unknown command; did you mean "trace show"?`,
    ],
    [
      ["--rot", "/tmp", "run"],
      `penguin: unknown option "--rot" before a command (write penguin <command> [flags]); did you mean --root?`,
    ],
  ];
  for (const [args, first] of cases) {
    const r = await runCli(args);
    assert.equal(r.code, 2, args.join(" "));
    assert.equal(r.stderr.split("\n")[0], first, args.join(" "));
  }
  const far = await runCli(["frobnicate"]);
  assert.doesNotMatch(far.stderr, /did you mean/);
});

Deno.test("every usage error points to the help of its own command", async () => {
  for (const c of COMMANDS) {
    const r = await runCli([...c.path, "--no-such-flag"]);
    assert.equal(r.code, 2, c.path.join(" "));
    assert.ok(
      r.stderr.endsWith(`\nRun "penguin help ${c.path.join(" ")}" for usage.\n`),
      `${c.path.join(" ")}: ${r.stderr}`,
    );
  }
  const inGroup = await runCli(["config", "vault", "nope"]);
  assert.ok(
    inGroup.stderr.endsWith(`\nRun "penguin help config vault" for usage.\n`),
    inGroup.stderr,
  );
  const top = await runCli(["nope"]);
  assert.ok(top.stderr.endsWith(`\nRun "penguin help" for the list of commands.\n`), top.stderr);
});

Deno.test("every command group given alone prints its commands, as help does", async () => {
  const groups = new Set<string>();
  const commands = new Set(COMMANDS.map((c) => c.path.join(" ")));
  for (const c of COMMANDS) {
    for (let k = 1; k < c.path.length; k++) {
      const g = c.path.slice(0, k).join(" ");
      if (!commands.has(g)) groups.add(g);
    }
  }
  assert.ok(groups.has("config model") && groups.has("sessions"), [...groups].join(", "));
  for (const g of groups) {
    const words = g.split(" ");
    const alone = await runCli(words);
    const help = await runCli(["help", ...words]);
    assert.equal(alone.code, 0, `${g}: ${alone.stderr}`);
    assert.equal(alone.stderr, "");
    assert.equal(alone.stdout, help.stdout, g);
    assert.match(alone.stdout, new RegExp(`^Usage: penguin ${g} <command>`));
    await assertSnapshot(alone.stdout, snap(`help-${words.join("-")}`));
    for (const c of COMMANDS.filter((c) => c.path.join(" ").startsWith(g + " "))) {
      assert.ok(alone.stdout.includes(`  ${c.path.join(" ")} `), `${g} lists ${c.path.join(" ")}`);
    }
  }
  const flagOnly = await runCli(["config", "model", "--json"]);
  assert.equal(flagOnly.code, 2);
  assert.match(flagOnly.stderr, /^penguin: "config model" needs a command: add, list, /);
});
