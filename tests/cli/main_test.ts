import assert from "node:assert/strict";
import { REPO, runCli } from "../support/cli.ts";
import { assertSnapshot } from "../support/snapshot.ts";
import { allCommands } from "../../lib/cli/registry.ts";

const COMMANDS = await allCommands();
import { VERSION } from "../../lib/version.ts";

const snap = (name: string) => new URL(`./__snapshots__/${name}.txt`, import.meta.url);

Deno.test("penguin --version prints the version from deno.json", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${REPO}deno.json`));
  assert.equal(VERSION, config.version);
  for (const flag of ["--version", "-v"]) {
    const r = await runCli([flag]);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `penguin ${config.version}\n`);
  }
});

Deno.test("penguin with no arguments and penguin --help print the same command list", async () => {
  const bare = await runCli([]);
  const help = await runCli(["--help"]);
  assert.equal(bare.code, 0);
  assert.equal(help.code, 0);
  assert.equal(bare.stdout, help.stdout);
  for (const c of COMMANDS) assert.ok(help.stdout.includes(c.path.join(" ")), c.path.join(" "));
  await assertSnapshot(help.stdout, snap("help"));
});

Deno.test("every command has help reachable three ways, all identical", async () => {
  for (const c of COMMANDS) {
    const a = await runCli(["help", ...c.path]);
    const b = await runCli([...c.path, "--help"]);
    assert.equal(a.code, 0, c.path.join(" "));
    assert.equal(b.code, 0, c.path.join(" "));
    assert.equal(a.stdout, b.stdout);
    assert.match(a.stdout, new RegExp(`Usage: penguin ${c.path.join(" ")}`));
    await assertSnapshot(a.stdout, snap(`help-${c.path.join("-")}`));
  }
});

Deno.test("an unknown command is a usage error with exit code 2 and no stack trace", async () => {
  const r = await runCli(["frobnicate"]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.equal(
    r.stderr,
    'penguin: unknown command "frobnicate"\nRun "penguin help" for the list of commands.\n',
  );
  assert.doesNotMatch(r.stderr, /\bat .*\.ts:\d+/);
});

Deno.test("help for an unknown command is a usage error", async () => {
  const r = await runCli(["help", "nope"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /no help for "nope"/);
});

Deno.test("--root without a directory is a usage error", async () => {
  const r = await runCli(["--root"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--root needs a directory/);
});

Deno.test("PENGUIN_DEBUG=1 adds the stack trace to an error", async () => {
  const plain = await runCli(["frobnicate"]);
  const debug = await runCli(["frobnicate"], { env: { PENGUIN_DEBUG: "1" } });
  assert.doesNotMatch(plain.stderr, /PenguinError/);
  assert.match(debug.stderr, /PenguinError: unknown command/);
  assert.match(debug.stderr, /\.ts:\d+/);
});

Deno.test("flag errors are one line naming the command, with a hint for values that start with a dash", async () => {
  const unknown = await runCli(["trace", "validate", "--bogus", "x"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^penguin: trace validate: Unknown option '--bogus'\n/);
  const dash = await runCli([
    "config",
    "model",
    "add",
    "--provider",
    "p",
    "--model-id",
    "m",
    "--price-output",
    "-1",
  ]);
  assert.equal(dash.code, 2);
  assert.equal(
    dash.stderr.split("\n")[0],
    `penguin: config model add: Option '--price-output' argument is ambiguous (write --price-output=<value> for a value starting with "-")`,
  );
});
