// The plan's "certainly missing" test for its hide list: a directory listed once instead of a
// failed look-up per name (each costs a thrown error). It may only ever answer "missing" for a
// name that is not there.
import assert from "node:assert/strict";
import { join } from "node:path";
import { absentAmong } from "../../lib/sandbox/home.ts";

Deno.test("absentAmong answers missing only for names its directory's listing lacks, in any case", async () => {
  const dir = await Deno.makeTempDir({ prefix: "penguin-absent-among-" });
  try {
    await Deno.writeTextFile(join(dir, ".netrc"), "");
    await Deno.mkdir(join(dir, "Config"));
    await Deno.symlink("nowhere", join(dir, ".dangling"));
    const names = [".netrc", "config", ".dangling", ".aws", ".ssh", "caf\u00e9"].map((n) =>
      join(dir, n)
    );
    const inMissing = ["a", "b", "c", "d"].map((n) => join(dir, "none", n));
    const absent = absentAmong([...names, join(dir, "sub", "x"), ...inMissing]);
    assert.equal(absent(join(dir, ".netrc")), false, "a file there");
    assert.equal(absent(join(dir, "config")), false, "there as Config: a case-folding system");
    assert.equal(absent(join(dir, ".dangling")), false, "a dangling link is there");
    assert.equal(absent(join(dir, ".aws")), true);
    assert.equal(absent(join(dir, ".ssh")), true);
    assert.equal(absent(join(dir, "caf\u00e9")), false, "not plain ASCII: looked up");
    assert.equal(absent(join(dir, "sub", "x")), false, "one name in its directory: looked up");
    assert.equal(absent(inMissing[0]!), true, "in a directory its parent's listing lacks");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("absentAmong looks up every name of a directory holding a name beyond plain ASCII", async () => {
  // On a case-folding directory `.\u017Fsh` is `.ssh`: its listing cannot tell `.ssh` missing.
  const dir = await Deno.makeTempDir({ prefix: "penguin-absent-among-" });
  try {
    await Deno.mkdir(join(dir, ".\u017Fsh"));
    const absent = absentAmong([".ssh", ".aws", ".gnupg", ".netrc"].map((n) => join(dir, n)));
    assert.equal(absent(join(dir, ".ssh")), false);
    assert.equal(absent(join(dir, ".aws")), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("absentAmong looks up every name of a directory it cannot list", () => {
  const gone = "/nonexistent-penguin-dir";
  const absent = absentAmong(["a", "b", "c", "d"].map((n) => join(gone, n)));
  assert.equal(absent(join(gone, "a")), false);
});
