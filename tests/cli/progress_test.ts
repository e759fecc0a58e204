// deno-lint-ignore-file no-control-regex
// Long work shows a progress line on stderr when stderr is a terminal, and never on stdout, in
// --json output or when stderr is not a terminal. The terminal is real: util-linux `script` runs
// penguin on a pseudo-terminal and records every byte written to it, with stdout redirected to
// a file, so the test reads what the terminal got and what stdout got separately.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createProgress } from "../../lib/cli/render/progress.ts";
import { mcpAddArgs, REPO, runCli, runCliOk } from "../support/cli.ts";
import { hasScript, runUnderScript, shellQuote } from "../support/pty_script.ts";
import { rootTest } from "../support/root_test.ts";

/** Run penguin with stderr on a pseudo-terminal and stdout to a file: what each received. */
async function onTerminal(
  dir: string,
  args: string[],
): Promise<{ code: number; terminal: string; stdout: string }> {
  const out = join(dir, "stdout.txt");
  const r = await runUnderScript(dir, "terminal.log", args, { shellTail: ` > ${shellQuote(out)}` });
  return { code: r.code, terminal: r.log, stdout: await Deno.readTextFile(out) };
}

Deno.test("a progress line: drawn at once, redrawn at most every interval, cut to the width, erased", () => {
  const writes: string[] = [];
  let t = 0;
  const p = createProgress({ write: (s) => writes.push(s), now: () => t, columns: 30 });
  p.done();
  assert.equal(writes.length, 0, "nothing drawn: nothing to erase");
  p.show("importing 1/3 a.jsonl");
  t = 50;
  p.show("importing 2/3 b.jsonl");
  t = 150;
  p.show("importing 3/3 a-very-long-file-name-that-does-not-fit.jsonl\x1b[31m");
  p.done();
  assert.equal(writes[0], "\r\x1b[Kimporting 1/3 a.jsonl");
  assert.equal(writes.length, 3, "the redraw within the interval was skipped");
  assert.ok(writes[1]!.startsWith("\r\x1b[Kimporting 3/3 a-very"));
  assert.equal([...writes[1]!.slice(4)].length, 29);
  assert.ok(writes[1]!.endsWith("…"));
  assert.equal(writes[2], "\r\x1b[K");
});

Deno.test(rootTest(
  "sessions import of many files: progress on the terminal's stderr, not on stdout nor with --json",
  !hasScript,
  async (dir) => {
    const root = join(dir, "data");
    const files = ["a.jsonl", "b.jsonl", "c.jsonl"].map((f) => join(dir, f));
    const r = await onTerminal(dir, ["--root", root, "sessions", "import", ...files]);
    assert.equal(r.code, 1, r.terminal);
    assert.match(r.terminal, /\r\x1b\[Kimporting 1\/3 a\.jsonl/);
    assert.match(r.terminal, /\r\x1b\[Kpenguin: refused/, "the line is erased before the report");
    assert.doesNotMatch(r.stdout, /importing|\x1b/);
    assert.match(r.stdout, /0 session\(s\) imported, 3 refused/);
    const json = await onTerminal(dir, [
      "--root",
      root,
      "sessions",
      "import",
      "--json",
      ...files,
    ]);
    assert.doesNotMatch(json.terminal + json.stdout, /importing \d/);
    JSON.parse(json.stdout);
    const piped = await runCli(["--root", root, "sessions", "import", ...files]);
    assert.doesNotMatch(piped.stderr + piped.stdout, /importing \d/);
  },
));

Deno.test(rootTest(
  "trace stats and trace validate over a directory show their progress, on the terminal only",
  !hasScript,
  async (dir) => {
    const samples = join(REPO, "samples");
    const r = await onTerminal(dir, ["trace", "stats", samples]);
    assert.equal(r.code, 0, r.terminal);
    assert.match(
      r.terminal,
      /\r\x1b\[Kfinding trace files…\r\x1b\[K\r\x1b\[Kreading session 1\/\d+/,
    );
    assert.doesNotMatch(r.stdout, /reading session|finding/);
    const validate = await onTerminal(dir, ["trace", "validate", samples]);
    assert.equal(validate.code, 0, validate.terminal);
    assert.match(validate.terminal, /\r\x1b\[Kvalidating 1\/\d+/);
    assert.doesNotMatch(validate.stdout, /validating/);
    assert.match(validate.stdout, /^\d+ file\(s\), \d+ record\(s\), 0 problem\(s\)\n$/);
    const json = await onTerminal(dir, ["trace", "stats", "--json", samples]);
    assert.doesNotMatch(json.terminal + json.stdout, /reading session|finding trace/);
    JSON.parse(json.stdout);
  },
));

Deno.test(rootTest(
  "agent snapshot counts the files it packs, and mcp test shows that it is connecting",
  !hasScript,
  async (dir) => {
    const root = join(dir, "data");
    await runCliOk(mcpAddArgs(root, "x", "--no-test", "--", "true"));
    const snap = await onTerminal(dir, ["--root", root, "agent", "snapshot"]);
    assert.equal(snap.code, 0, snap.terminal);
    assert.match(snap.terminal, /\r\x1b\[Kpacking \d+ files?, [\d.]+ MiB/);
    assert.doesNotMatch(snap.stdout, /packing/);
    assert.match(snap.stdout, /Wrote snapshot v1/);
    const mcp = await onTerminal(dir, ["--root", root, "mcp", "test", "x", "--workspace", dir]);
    assert.match(mcp.terminal, /connecting to x…/);
    assert.doesNotMatch(mcp.stdout, /connecting/);
    const piped = await runCli(["--root", root, "mcp", "test", "x", "--workspace", dir]);
    assert.doesNotMatch(piped.stderr, /connecting to/);
  },
));
