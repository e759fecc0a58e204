// The filter file is one per filter content, shared by every penguin process, and checked before
// each use. (Separate from seccomp_file_test.ts, whose last test turns the file off for its process.)
import assert from "node:assert/strict";
import { join } from "node:path";

Deno.test("every penguin process shares one filter file, and directories of other filters are removed", async () => {
  // In a run directory of its own: in the shared one, other tests' penguins remove stray
  // filter directories too, and could remove this test's before it is written.
  const run = await Deno.makeTempDir({ prefix: "penguin-run-" });
  const env = { PENGUIN_RUN_DIR: join(run, "run") };
  const script = `import { seccompFile } from ${
    JSON.stringify(new URL("../../lib/sandbox/_seccomp_file.ts", import.meta.url).href)
  }; console.log(await seccompFile([]));`;
  const inProcess = async (): Promise<string> => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", script],
      env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    return new TextDecoder().decode(out.stdout).trim();
  };
  try {
    const path = await inProcess();
    assert.ok(path.startsWith(env.PENGUIN_RUN_DIR), path);
    // A killed process of an earlier version left its own directory behind.
    const left = await Deno.makeTempDir({ dir: env.PENGUIN_RUN_DIR, prefix: "seccomp-" });
    await Deno.writeTextFile(join(left, "filter"), "old");
    assert.equal(await inProcess(), path);
    await assert.rejects(Deno.stat(left), Deno.errors.NotFound);
  } finally {
    await Deno.remove(run, { recursive: true });
  }
});

Deno.test("a filter file whose content changed is made again before it is used", async () => {
  // In a run directory of its own: the shared one serves the other tests' sandboxes meanwhile.
  const run = await Deno.makeTempDir({ prefix: "penguin-run-" });
  try {
    const mod = new URL("../../lib/sandbox/_seccomp_file.ts", import.meta.url).href;
    const prog = new URL("../../lib/sandbox/seccomp.ts", import.meta.url).href;
    const script = `
      import { seccompFile } from ${JSON.stringify(mod)};
      import { seccompProgram } from ${JSON.stringify(prog)};
      const path = await seccompFile([]);
      await Deno.chmod(path, 0o600);
      await Deno.writeFile(path, new Uint8Array(seccompProgram().length));
      const again = await seccompFile([]);
      const same = (await Deno.readFile(again)).every((b, i) => b === seccompProgram()[i]);
      console.log(JSON.stringify({ samePath: again === path, same }));`;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", script],
      env: { PENGUIN_RUN_DIR: join(run, "run") },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.deepEqual(JSON.parse(new TextDecoder().decode(out.stdout)), {
      samePath: true,
      same: true,
    });
  } finally {
    await Deno.remove(run, { recursive: true });
  }
});
