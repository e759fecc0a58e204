// gzip is handled in one place: lib/state/_gzip.ts (with its size limit).
import assert from "node:assert/strict";
import { REPO } from "../support/cli.ts";

function* walk(dir: string): Generator<string> {
  for (const e of Deno.readDirSync(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) yield* walk(p);
    else if (e.name.endsWith(".ts")) yield p;
  }
}

Deno.test("only lib/state/_gzip.ts compresses or decompresses gzip streams", () => {
  const lib = `${REPO}lib`;
  const others = [...walk(lib)].filter((f) =>
    !f.endsWith("/lib/state/_gzip.ts") &&
    /\b(?:De)?[Cc]ompressionStream\b/.test(Deno.readTextFileSync(f))
  );
  assert.deepEqual(others.map((f) => f.slice(lib.length + 1)), []);
});
