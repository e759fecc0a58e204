// The search for other names (hard links) of hidden or read-only files (lib/sandbox/_hard_links.ts).
import assert from "node:assert/strict";
import { join } from "node:path";
import { otherNames } from "../../lib/sandbox/_hard_links.ts";

Deno.test("other names are found below the roots, not in skipped directories, and a walk cut short says which files it left unfound", async () => {
  const root = await Deno.makeTempDir({ prefix: "penguin-hardlinks-" });
  try {
    const file = join(root, "secret");
    await Deno.writeTextFile(file, "x");
    await Deno.mkdir(join(root, "a", "b"), { recursive: true });
    await Deno.mkdir(join(root, "hidden"));
    await Deno.link(file, join(root, "a", "b", "other"));
    await Deno.link(file, join(root, "hidden", "third"));
    await Deno.writeTextFile(join(root, "single"), "y");
    const skip = (d: string) => d === join(root, "hidden");
    const found = await otherNames([file, join(root, "single")], [root], skip);
    assert.deepEqual(found, { names: [join(root, "a", "b", "other")], unfound: [] });
    const cut = await otherNames([file], [root], () => false, 2);
    assert.deepEqual(cut.unfound, [file]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("other names of a file outside the roots are found in a root on its file system", async () => {
  const base = await Deno.makeTempDir({ prefix: "penguin-hardlinks-out-" });
  try {
    const outside = join(base, "home", ".bashrc");
    const root = join(base, "ws");
    await Deno.mkdir(join(base, "home"));
    await Deno.mkdir(join(root, "sub"), { recursive: true });
    await Deno.writeTextFile(outside, "x");
    await Deno.link(outside, join(root, "sub", "bashrc"));
    await Deno.link(outside, join(base, "home", "elsewhere"));
    const found = await otherNames([outside], [root], () => false);
    assert.deepEqual(found, { names: [join(root, "sub", "bashrc")], unfound: [] });
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
