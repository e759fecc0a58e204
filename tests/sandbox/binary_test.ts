// The shipped binary: one permission set (deno.json "permissions.penguin"),
// used verbatim by the CLI tests and by scripts/compile.ts, baked into the
// binary together with --unstable-worker-options and the file-tool worker.
import assert from "node:assert/strict";
import { join } from "node:path";
import { PROVIDER_GROUPS } from "../../lib/models/catalog.ts";
import { ENV_ALLOWLIST, PROXY_VARS } from "../../lib/sandbox/env.ts";
import { penguinArgv, REPO } from "../support/cli.ts";
import {
  BAKED_FLAGS,
  compileArgs,
  INCLUDES,
  notEmbedded,
  RUNTIME_FLAGS,
} from "../../scripts/compile.ts";
import { selfArgv } from "../../lib/tools/host/self.ts";

interface PermissionSet {
  read: unknown;
  write: unknown;
  net: unknown;
  env: { allow: string[]; ignore: string[] };
  run: string[];
  sys: string[];
  ffi: unknown;
  import: unknown;
}

const config = JSON.parse(await Deno.readTextFile(join(REPO, "deno.json")));
const set: PermissionSet = config.permissions.penguin;

/** Flags that grant or change permissions, besides the permission set itself. */
const PERMISSION_FLAG =
  /^(-A|-P|--permission-set|--allow-|--deny-|--ignore-|-[RWNESI](=|$)|--unstable(?!-lazy-dynamic-imports$)|--no-prompt)/;

Deno.test("the CLI tests and scripts/compile.ts use exactly the deno.json permission set flags", () => {
  assert.deepEqual(BAKED_FLAGS, ["-P=penguin", "--no-prompt"]);
  const cli = penguinArgv();
  const compile = compileArgs("/tmp/out");
  for (const argv of [cli, compile]) {
    for (const flag of BAKED_FLAGS) assert.ok(argv.includes(flag), `${argv.join(" ")} has ${flag}`);
    assert.deepEqual(argv.filter((a) => PERMISSION_FLAG.test(a)), BAKED_FLAGS);
    assert.equal(argv[argv.indexOf("--config") + 1], join(REPO, "deno.json"));
  }
  assert.equal(
    config.tasks.penguin,
    "deno run --quiet -P=penguin --no-prompt --unstable-lazy-dynamic-imports --v8-flags=--max-semi-space-size=4,--no-lazy-feedback-allocation,--no-maglev main.ts",
  );
});

Deno.test("the task, the binary and a copy of penguin run with the same V8 flags", () => {
  assert.deepEqual(RUNTIME_FLAGS, [
    "--v8-flags=--max-semi-space-size=4,--no-lazy-feedback-allocation,--no-maglev",
  ]);
  const v8 = (argv: string[]) => argv.filter((a) => a.startsWith("--v8-flags"));
  assert.deepEqual(v8(penguinArgv()), RUNTIME_FLAGS);
  assert.deepEqual(v8(compileArgs("/tmp/out")), RUNTIME_FLAGS);
  if (!Deno.build.standalone) assert.deepEqual(v8(selfArgv(["--version"])), RUNTIME_FLAGS);
});

Deno.test("the permission set is the narrow one penguin needs", () => {
  // Unscoped only where the user chooses the paths and hosts: data roots, workspaces, model endpoints.
  assert.equal(set.read, true);
  assert.equal(set.write, true);
  assert.equal(set.net, true);
  assert.ok(Array.isArray(set.env.allow), "env is a list of names, not allow-all");
  assert.deepEqual(set.env.ignore, ["LOG_TOKENS", "LOG_STREAM"]);
  assert.deepEqual(set.run, ["bash", "sh", "/usr/bin/setpriv"]);
  assert.deepEqual(set.sys, ["hostname", "osRelease", "uid"]);
  assert.equal(set.ffi, false);
  assert.deepEqual(set.import, { deny: true });
  const allowed = (name: string) =>
    set.env.allow.some((p) => p.endsWith("*") ? name.startsWith(p.slice(0, -1)) : p === name);
  // Every provider key variable, every variable commands may inherit, and penguin's own.
  const needed = [
    ...PROVIDER_GROUPS.flatMap((g) => (g.api_key_env ? [g.api_key_env] : [])),
    ...ENV_ALLOWLIST,
    ...PROXY_VARS,
    "LC_ALL",
    "NO_COLOR",
    "PENGUIN_HOME",
    "PENGUIN_DEBUG",
    "PENGUIN_BWRAP",
    "PENGUIN_SHELL",
    "USERPROFILE",
  ];
  assert.deepEqual(needed.filter((n) => !allowed(n)), []);
  assert.ok(PROVIDER_GROUPS.filter((g) => g.api_key_env).length >= 12);
  assert.ok(
    !allowed("AWS_SECRET_ACCESS_KEY") && !allowed("GITHUB_TOKEN") && !allowed("SSH_AUTH_SOCK"),
  );
});

/** The compile metadata JSON (baked flags) inside a compiled binary. */
function metadata(bin: Uint8Array): Record<string, unknown> {
  const text = new TextDecoder("latin1").decode(bin);
  const start = text.indexOf('{"argv":');
  assert.ok(start >= 0, "the binary carries compile metadata");
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return JSON.parse(text.slice(start, i + 1));
  }
  assert.fail("unterminated compile metadata");
}

Deno.test("the dry compile embeds the worker module and bakes the permission set and worker-options", async () => {
  const dir = await Deno.makeTempDir({ prefix: "penguin-bin-" });
  try {
    const out = join(dir, "penguin");
    const res = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", join(REPO, "scripts/compile.ts"), "--dry", "-o", out],
      env: { DENORT_BIN: "/bin/true", NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(res.stdout) + new TextDecoder().decode(res.stderr);
    assert.equal(res.code, 0, text);
    assert.match(text, /compile:dry ok: module graph and embedded files are complete/);
    assert.deepEqual(INCLUDES, ["lib/tools/worker/file_worker.ts"]);
    assert.deepEqual(await notEmbedded(out), []);
    const bin = await Deno.readFile(out);
    const meta = metadata(bin);
    const perms = meta.permissions as Record<string, unknown>;
    assert.deepEqual(perms.allow_env, set.env.allow);
    assert.deepEqual(perms.ignore_env, set.env.ignore);
    assert.deepEqual(perms.allow_run, set.run);
    assert.deepEqual(perms.allow_sys, set.sys);
    assert.deepEqual(perms.allow_read, []); // [] = everywhere
    assert.deepEqual(perms.allow_ffi, null);
    assert.deepEqual(perms.deny_import, []); // [] = every remote import denied
    assert.equal(perms.prompt, false);
    const unstable = meta.unstable_config as { features: string[] };
    assert.ok(unstable.features.includes("worker-options"));
    // Test-only npm packages stay out (--exclude-unused-npm).
    const embedded = new TextDecoder("latin1").decode(bin);
    assert.ok(embedded.includes('"name": "zod"'));
    assert.ok(!embedded.includes('"name": "playwright-core"'));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
