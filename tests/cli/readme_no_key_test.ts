// The README's "No key? Try it" commands work on a fresh clone: each one runs as a CLI
// subprocess, exits 0 and prints what it promises. The list below must match the README.
import assert from "node:assert/strict";
import { join } from "node:path";
import { type CliResult, REPO, runCli } from "../support/cli.ts";

type Check = (r: CliResult, cwd: string) => void | Promise<void>;

/** Every command of the README block (without `deno task penguin`) and what its output must show. */
const EXPECTED: Record<string, Check> = {
  "demo": async (r) => {
    assert.match(r.stdout, /^\[scripted\] .*SCRIPTED model/m);
    assert.match(r.stdout, /write_file .*hello\.txt/);
    assert.match(r.stdout, /exec_command .*cat hello\.txt/);
    assert.match(r.stdout, /^Trace: \S+\.jsonl$/m);
    const dir = /^Everything is in (\S+) \(remove it when done\)\.$/m.exec(r.stdout)?.[1];
    assert.ok(dir, r.stdout);
    await Deno.remove(dir, { recursive: true });
  },
  "trace show samples/plain": (r) => {
    assert.match(r.stdout, /^session session-\S+ · scripted\/scripted-samples/);
    assert.match(r.stdout, /^> Create notes\.md/m);
    assert.match(r.stdout, /edit_file -> /);
    assert.match(r.stdout, /^> Add the chinstrap penguin\.$/m);
  },
  "trace show samples/subagents": (r) => {
    assert.match(r.stdout, /run_subagent <- Count the files/);
    assert.match(r.stdout, /· source subagent ·/);
    assert.match(r.stdout, /The helper counted 2 files\./);
  },
  "trace stats samples": (r) => {
    assert.match(r.stdout, /^total: 5 session\(s\) · 6 file\(s\) · \d+ record\(s\)/m);
    assert.match(r.stdout, /compactions: 1 \(completed 1/);
    assert.match(r.stdout, /subagents: 1$/m);
  },
  "trace export samples/compaction --format html -o compaction.html": async (r, cwd) => {
    assert.match(r.stderr, /^exported session-\S+ \(html\) to compaction\.html$/m);
    const html = await Deno.readTextFile(join(cwd, "compaction.html"));
    assert.match(html, /^<!DOCTYPE html>/i);
    assert.ok(html.includes("haiku.txt"));
  },
  "trace validate samples": (r) => {
    assert.match(r.stdout, /^6 file\(s\), \d+ record\(s\), 0 problem\(s\)$/m);
  },
};

/** The commands of the sh block under "### No key? Try it". */
async function readmeCommands(): Promise<string[]> {
  const readme = await Deno.readTextFile(join(REPO, "README.md"));
  const section = readme.split(/^### No key\? Try it$/m)[1];
  assert.ok(section, 'README.md has a "### No key? Try it" section');
  const block = /^```sh\n([\s\S]*?)^```$/m.exec(section)?.[1];
  assert.ok(block, "the section starts with a sh block");
  return block.trim().split("\n").map((line) => {
    assert.match(line, /^deno task penguin /, `every line runs penguin: ${line}`);
    return line.replace(/^deno task penguin /, "");
  });
}

Deno.test("the README's no-key commands are exactly the ones this test checks", async () => {
  assert.deepEqual(await readmeCommands(), Object.keys(EXPECTED));
});

for (const command of Object.keys(EXPECTED)) {
  Deno.test(`README no-key command works on a checkout: penguin ${command}`, async () => {
    // `deno task` runs in the repository; a scratch cwd holding samples/ keeps outputs out of it.
    const cwd = await Deno.makeTempDir({ prefix: "penguin-readme-" });
    try {
      await Deno.symlink(join(REPO, "samples"), join(cwd, "samples"));
      const r = await runCli(command.split(" "), { cwd });
      assert.equal(r.code, 0, `penguin ${command}:\n${r.stdout}\n${r.stderr}`);
      assert.notEqual((r.stdout + r.stderr).trim(), "", "it prints something");
      await EXPECTED[command]!(r, cwd);
    } finally {
      await Deno.remove(cwd, { recursive: true });
    }
  });
}
