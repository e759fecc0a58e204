// The walk for nested repositories after a command (git_nested.ts, no entry limit) keeps a
// directory as its name and its parent's record, not as its path: 10,000 directories at 3.5 KB
// paths, which a command makes in a second, took the walk to 285 MB (30,000: penguin past 800 MB,
// attack round 19 bounded #2).
import assert from "node:assert/strict";
import { join } from "node:path";
import { penguinArgv } from "../support/cli.ts";
import { visibleTempDir } from "../support/roots.ts";

const GIT_NESTED = new URL("../../lib/sandbox/git_nested.ts", import.meta.url).href;
const MB = 1024 * 1024;

Deno.test({
  name:
    "the walk of 10,000 directories at 3.5 KB paths peaks under 180 MB, with penguin's V8 flags",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const base = await visibleTempDir("penguin-walk-memory-");
    try {
      let deep = join(base, "ws");
      for (let i = 1; i <= 14; i++) deep = join(deep, "d".repeat(250) + i);
      await Deno.mkdir(deep, { recursive: true });
      for (let i = 0; i < 10_000; i++) await Deno.mkdir(join(deep, String(i).padStart(240, "0")));
      const v8 = penguinArgv().filter((a) => a.startsWith("--v8-flags="));
      const script = `import { findNestedRepos } from ${JSON.stringify(GIT_NESTED)};
        const walk = await findNestedRepos(${JSON.stringify(join(base, "ws"))}, Infinity);
        const hwm = /VmHWM:\\s+(\\d+) kB/.exec(Deno.readTextFileSync("/proc/self/status"))[1];
        console.log(JSON.stringify({ complete: walk.complete, consistent: walk.consistent,
          repos: walk.repos.length, tooLong: walk.tooLong.length, peak: Number(hwm) * 1024 }));`;
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["eval", ...v8, script],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      const got = JSON.parse(new TextDecoder().decode(out.stdout));
      assert.deepEqual(
        {
          complete: got.complete,
          consistent: got.consistent,
          repos: got.repos,
          tooLong: got.tooLong,
        },
        { complete: true, consistent: true, repos: 0, tooLong: 0 },
      );
      assert.ok(got.peak < 180 * MB, `the walk peaked at ${Math.round(got.peak / MB)} MB`);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});
