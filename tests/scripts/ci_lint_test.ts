// .ci/lint, the quality gate's lint of the workflows (actionlint) and install.sh (shellcheck).
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO } from "../support/cli.ts";
import { withTempDir } from "../support/roots.ts";

async function lint(dir?: string): Promise<{ code: number; out: string }> {
  const out = await new Deno.Command(join(REPO, ".ci/lint"), {
    args: dir === undefined ? [] : [dir],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, out: dec.decode(out.stdout) + dec.decode(out.stderr) };
}

/** A copy of the repository's workflows and install.sh in `dir`, then `edit` applied. */
async function copyWith(dir: string, edit: Record<string, string> = {}): Promise<void> {
  await Deno.mkdir(join(dir, ".github/workflows"), { recursive: true });
  for (const f of ["ci.yml", "release.yml"]) {
    await Deno.copyFile(join(REPO, ".github/workflows", f), join(dir, ".github/workflows", f));
  }
  await Deno.copyFile(join(REPO, "install.sh"), join(dir, "install.sh"));
  for (const [path, text] of Object.entries(edit)) await Deno.writeTextFile(join(dir, path), text);
}

/** Lint a copy in `dir` whose `path` has `from` replaced by `to` (which must change it); it fails. */
async function lintBroken(
  dir: string,
  path: string,
  [from, to]: [string, string],
): Promise<string> {
  const text = await Deno.readTextFile(join(REPO, path));
  const broken = text.replace(from, to);
  assert.notEqual(broken, text);
  await copyWith(dir, { [path]: broken });
  const r = await lint(dir);
  assert.equal(r.code, 1, r.out);
  return r.out;
}

Deno.test(".ci/lint passes the repository's workflows and install.sh", async () => {
  const r = await lint();
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /Checking 2 workflow file\(s\)/);
  assert.match(r.out, /lint: shellcheck install\.sh/);
});

Deno.test(".ci/lint fails on a workflow actionlint rejects, naming file and line", async () => {
  await withTempDir("penguin-lint-", async (dir) => {
    const out = await lintBroken(dir, ".github/workflows/release.yml", [
      "runs-on: ubuntu-latest",
      "runs-on: ubuntu-latest-nope",
    ]);
    assert.match(
      out,
      /\.github\/workflows\/release\.yml:\d+:\d+ label "ubuntu-latest-nope" is unknown/,
    );
  });
});

Deno.test(".ci/lint fails on a bashism in install.sh", async () => {
  await withTempDir("penguin-lint-", async (dir) => {
    const out = await lintBroken(dir, "install.sh", [
      'if [ -z "$expected" ]; then',
      'if [[ -z "$expected" ]]; then',
    ]);
    assert.match(out, /SC3010/);
  });
});

Deno.test(".ci/lint fails when there is no workflow to lint", async () => {
  await withTempDir("penguin-lint-", async (dir) => {
    await copyWith(dir);
    await Deno.remove(join(dir, ".github/workflows"), { recursive: true });
    const r = await lint(dir);
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /lint: no workflow in \.github\/workflows/);
  });
});
