import assert from "node:assert/strict";
import { join } from "node:path";
import { createEditFileTool } from "../../lib/tools/edit_file.ts";
import { type Dirs, entries, type Run, run, withDirs } from "./_support.ts";

const edit = createEditFileTool();
const numbers = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join("");

/** Write `text` to the workspace file f.txt, then edit it with replace_all. */
async function replaceAllInFile(
  d: Dirs,
  text: string,
  old_string: string,
  new_string: string,
): Promise<Run> {
  await Deno.writeTextFile(join(d.ws, "f.txt"), text);
  return await run(edit, { file_path: "f.txt", old_string, new_string, replace_all: true }, d);
}

/** Editing the workspace file `name` holding `bytes` is refused with `output`; the file is intact. */
async function assertRefusedIntact(
  d: Dirs,
  [name, bytes, old_string, new_string]: [string, Uint8Array, string, string],
  output: string,
): Promise<void> {
  await Deno.writeFile(join(d.ws, name), bytes);
  const r = await run(edit, { file_path: name, old_string, new_string }, d);
  assert.equal(r.output, output);
  assert.deepEqual(await Deno.readFile(join(d.ws, name)), bytes);
}

Deno.test("edit_file replaces one exact occurrence and shows the hunk", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.ws, "f.txt"), numbers(10));
    const r = await run(
      edit,
      { file_path: "f.txt", old_string: "line 5\n", new_string: "five\n" },
      d,
    );
    assert.equal(
      r.output,
      'Replaced 1 occurrence in "f.txt".\n' +
        "@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+five\n line 6\n line 7\n line 8",
    );
    assert.equal(r.status, "completed");
    assert.equal(
      await Deno.readTextFile(join(d.ws, "f.txt")),
      numbers(10).replace("line 5\n", "five\n"),
    );
  });
});

Deno.test("edit_file with replace_all replaces every occurrence, merging close sites and shifting later hunks", async () => {
  await withDirs(async (d) => {
    const text = "KEY\na\nKEY\nb\nc\nd\ne\nf\ng\nh\ni\nKEY\nz\n";
    const r = await replaceAllInFile(d, text, "KEY", "K1\nK2");
    assert.equal(
      r.output,
      'Replaced 3 occurrences in "f.txt".\n' +
        "@@ -1,6 +1,8 @@\n-KEY\n+K1\n+K2\n a\n-KEY\n+K1\n+K2\n b\n c\n d\n" +
        "@@ -9,5 +11,6 @@\n g\n h\n i\n-KEY\n+K1\n+K2\n z",
    );
    assert.equal(await Deno.readTextFile(join(d.ws, "f.txt")), text.replaceAll("KEY", "K1\nK2"));
  });
});

Deno.test("edit_file shows at most 5 hunks and counts the replacements left out", async () => {
  await withDirs(async (d) => {
    const text = Array.from({ length: 8 }, (_, i) => `hit ${i}\n${"pad\n".repeat(10)}`).join("");
    const r = await replaceAllInFile(d, text, "hit", "HIT");
    assert.equal(r.output.split("\n").filter((l) => l.startsWith("@@")).length, 5);
    assert.ok(r.output.startsWith('Replaced 8 occurrences in "f.txt".\n'));
    assert.ok(r.output.endsWith("\n…and 3 more replacements"));
  });
});

Deno.test("edit_file refuses empty and identical strings before touching the file", async () => {
  await withDirs(async (d) => {
    const empty = await run(edit, { file_path: "f.txt", old_string: "", new_string: "x" }, d);
    assert.equal(
      empty.output,
      "old_string must not be empty — edit_file replaces existing text. To create a file or rewrite it wholesale, use write_file.",
    );
    assert.equal(empty.status, "failed");
    const same = await run(edit, { file_path: "f.txt", old_string: "x", new_string: "x" }, d);
    assert.equal(
      same.output,
      "old_string and new_string are identical — nothing to change. Make new_string the desired replacement text.",
    );
  });
});

Deno.test("edit_file on a missing file says to use write_file, with the path hint", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.ws, "main.ts"), "");
    const r = await run(edit, { file_path: "mian.ts", old_string: "a", new_string: "b" }, d);
    assert.equal(
      r.output,
      'File not found: "mian.ts". edit_file only edits existing files — check the path, or use write_file to create it.' +
        ` The directory "${d.ws}" exists but has no entry "mian.ts". It contains: main.ts.`,
    );
    assert.equal(r.status, "failed");
  });
});

Deno.test("edit_file fails on zero matches (with a CRLF hint) and on ambiguous matches", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.ws, "lf.txt"), "a\nb\n");
    const none = await run(edit, { file_path: "lf.txt", old_string: "zzz", new_string: "y" }, d);
    assert.equal(
      none.output,
      'old_string not found in "lf.txt". Make sure it matches the file content exactly, including whitespace and indentation.',
    );
    await Deno.writeTextFile(join(d.ws, "crlf.txt"), "a\r\nb\r\n");
    const crlf = await run(edit, { file_path: "crlf.txt", old_string: "a\nb", new_string: "y" }, d);
    assert.ok(
      crlf.output.endsWith(
        " Note: the file uses CRLF (\\r\\n) line endings — a multi-line old_string must include the \\r characters.",
      ),
    );
    await Deno.writeTextFile(join(d.ws, "dup.txt"), "x\nx\n");
    const dup = await run(edit, { file_path: "dup.txt", old_string: "x", new_string: "y" }, d);
    assert.equal(
      dup.output,
      'old_string occurs 2 times in "dup.txt". Add surrounding context to make it unique, or set replace_all to true to replace every occurrence.',
    );
    assert.equal(dup.status, "failed");
    assert.equal(await Deno.readTextFile(join(d.ws, "dup.txt")), "x\nx\n");
  });
});

Deno.test("edit_file keeps the file mode and leaves no temp files behind", async () => {
  await withDirs(async (d) => {
    const f = join(d.ws, "run.sh");
    await Deno.writeTextFile(f, "echo one\n");
    await Deno.chmod(f, 0o700);
    await run(edit, { file_path: "run.sh", old_string: "one", new_string: "two" }, d);
    assert.equal((await Deno.stat(f)).mode! & 0o777, 0o700);
    assert.equal(await Deno.readTextFile(f), "echo two\n");
    assert.deepEqual(await entries(d.ws), ["run.sh"]);
  });
});

Deno.test("edit_file refuses directories, binary files and non-UTF-8 files, leaving them intact", async () => {
  await withDirs(async (d) => {
    await Deno.mkdir(join(d.ws, "dir"));
    const dir = await run(edit, { file_path: "dir", old_string: "a", new_string: "b" }, d);
    assert.equal(dir.output, 'Cannot edit "dir": it is a directory.');
    await assertRefusedIntact(
      d,
      ["b.bin", new Uint8Array([0x61, 0x00, 0x62]), "a", "c"],
      '"b.bin" looks like a binary file (contains NUL bytes); edit_file only edits text files.',
    );
    // "café" in Latin-1.
    await assertRefusedIntact(
      d,
      ["l1.txt", new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]), "caf", "CAF"],
      '"l1.txt" is not valid UTF-8 text; edit_file only edits UTF-8 text files.',
    );
  });
});

Deno.test("edit_file rejects bad arguments naming the parameter", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.ws, "f.txt"), "a\n");
    const flag = await run(edit, {
      file_path: "f.txt",
      old_string: "a",
      new_string: "b",
      replace_all: "yes",
    }, d);
    assert.ok(
      flag.output.startsWith(
        'edit_file was not run: argument "replace_all" must be a boolean, but a string',
      ),
    );
    const missing = await run(edit, { file_path: "f.txt", old_string: "a" }, d);
    assert.ok(
      missing.output.startsWith(
        'edit_file was not run: required argument "new_string" is missing.',
      ),
    );
    assert.ok(
      missing.output.endsWith(
        'Call edit_file again with a valid "new_string", as one JSON object using exactly these parameter names.',
      ),
    );
    assert.equal(await Deno.readTextFile(join(d.ws, "f.txt")), "a\n");
  });
});

Deno.test("edit_file bounds the edited file in bytes, not characters", async () => {
  // Attack round 20 bounded #1: every `a` of 4 MiB replaced by `€€€€` (12 bytes, 4 characters)
  // passed a check in characters (16 MiB) and wrote 48 MiB.
  await withDirs(async (d) => {
    const text = "a".repeat(4 * 1024 * 1024);
    const r = await replaceAllInFile(d, text, "a", "€€€€");
    assert.match(
      r.output,
      /^Cannot edit "f\.txt": the edited text would be .* or more; edit_file writes files up to 16 MiB/,
    );
    assert.equal((await Deno.stat(join(d.ws, "f.txt"))).size, text.length, "the file is intact");
  });
});
