// Attack round 19 concgit R1: with `./node_modules/.bin` in the user's PATH, a program the model
// wrote there ran when the user's git called `exiftool`, `delta` or `ssh` (or the user typed
// `git`). penguin cannot keep the directory from commands, so a session says so when it starts.
import assert from "node:assert/strict";
import { relativePathEntries, relativePathWarning } from "../../lib/sandbox/_path_warnings.ts";
import { turn } from "../support/model_server.ts";
import { inRoot, runCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";

Deno.test("relative and empty PATH entries are found, absolute ones are not", () => {
  assert.deepEqual(relativePathEntries("/usr/bin:/bin"), []);
  assert.deepEqual(relativePathEntries("./node_modules/.bin:/usr/bin:bin::/bin:bin"), [
    "./node_modules/.bin",
    "bin",
    "(empty: the current directory)",
  ]);
  assert.deepEqual(relativePathEntries("/usr/bin:"), ["(empty: the current directory)"]);
  assert.equal(relativePathWarning("/usr/bin:/bin"), undefined);
  assert.match(relativePathWarning(".:/usr/bin")!, /your PATH holds an entry relative .*\(\.\)/);
});

Deno.test("penguin run: a PATH with ./node_modules/.bin gets a warning naming it", async () => {
  await withModelRoot({ turns: [turn.text("hi")] }, async (sb) => {
    const path = `./node_modules/.bin:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`;
    const r = await runCli(inRoot(sb, "run", "-m", "hello"), { env: { PATH: path } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /warning: your PATH holds an entry relative to the current directory \(\.\/node_modules\/\.bin\)/,
    );
  });
});
