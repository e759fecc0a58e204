import assert from "node:assert/strict";
import { join } from "node:path";
import { createWriteFileTool } from "../../lib/tools/write_file.ts";
import { entries, readOrUndefined, run, withDirs } from "./_support.ts";

const write = createWriteFileTool();
const bytes = (s: string) => new TextEncoder().encode(s).length;
const numbers = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}\n`).join("");

Deno.test("write_file creates a file and reports lines and bytes", async () => {
  await withDirs(async (d) => {
    const r = await run(write, { file_path: "new.txt", content: "hello\nwörld\n" }, d);
    assert.equal(r.output, `Created "new.txt" (2 lines, ${bytes("hello\nwörld\n")} bytes).`);
    assert.equal(r.status, "completed");
    assert.equal(await Deno.readTextFile(join(d.ws, "new.txt")), "hello\nwörld\n");
    assert.equal(
      (await run(write, { file_path: "one.txt", content: "a" }, d)).output,
      'Created "one.txt" (1 line, 1 byte).',
    );
    assert.equal(
      (await run(write, { file_path: "e.txt", content: "" }, d)).output,
      'Created "e.txt" (0 lines, 0 bytes).',
    );
    assert.equal(await Deno.readTextFile(join(d.ws, "e.txt")), "");
  });
});

Deno.test("write_file creates missing parent directories inside the workspace", async () => {
  await withDirs(async (d) => {
    const r = await run(write, { file_path: "a/b/c.txt", content: "x\n" }, d);
    assert.equal(r.output, 'Created "a/b/c.txt" (1 line, 2 bytes).');
    assert.equal(await Deno.readTextFile(join(d.ws, "a", "b", "c.txt")), "x\n");
  });
});

Deno.test("write_file overwriting with the same content says so", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.ws, "f.txt"), "same\n");
    const r = await run(write, { file_path: "f.txt", content: "same\n" }, d);
    assert.equal(r.output, 'Overwrote "f.txt" (1 line, 5 bytes).\n(content unchanged)');
  });
});

Deno.test("write_file overwriting shows a unified diff with 3 lines of context", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.ws, "f.txt"), numbers(10));
    const next = numbers(10).replace("5\n", "five\n");
    const r = await run(write, { file_path: "f.txt", content: next }, d);
    assert.equal(
      r.output,
      `Overwrote "f.txt" (10 lines, ${bytes(next)} bytes).\n` +
        "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8",
    );
  });
});

Deno.test("write_file's diff splits distant changes into hunks and merges close ones", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.ws, "f.txt"), numbers(30));
    const next = numbers(30).replace("2\n", "two\n").replace("\n8\n", "\neight\n").replace(
      "25\n",
      "",
    )
      .replace("30\n", "30\n31\n");
    const r = await run(write, { file_path: "f.txt", content: next }, d);
    const hunks = r.output.split("\n").filter((l) => l.startsWith("@@"));
    assert.deepEqual(hunks, ["@@ -1,11 +1,11 @@", "@@ -22,9 +22,9 @@"]);
    assert.ok(r.output.includes("\n-25\n 26\n"));
    assert.ok(r.output.endsWith("\n 30\n+31"));
  });
});

Deno.test("write_file summarises large diffs as +X/−Y counts", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.ws, "f.txt"), numbers(100));
    const many = numbers(100).split("\n").map((l, i) => (i % 2 === 0 && l ? `${l}!` : l)).join(
      "\n",
    );
    const r = await run(write, { file_path: "f.txt", content: many }, d);
    assert.equal(
      r.output.split("\n")[1],
      "+50/−50 lines vs the previous content (diff too large to show)",
    );
    // Above the LCS cell cap (600 × 600 > 250 000) only the counts are computed.
    const oldLines = Array.from({ length: 600 }, (_, i) => `old ${i}\n`).join("");
    const newLines = Array.from({ length: 600 }, (_, i) => `new ${i}\n`).join("");
    await Deno.writeTextFile(join(d.ws, "g.txt"), oldLines);
    const g = await run(write, { file_path: "g.txt", content: newLines }, d);
    assert.equal(
      g.output.split("\n")[1],
      "+600/−600 lines vs the previous content (diff too large to show)",
    );
  });
});

Deno.test("write_file shows a lost or added final newline as git does", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.ws, "f.txt"), "a\nb\n");
    const r = await run(write, { file_path: "f.txt", content: "a\nb" }, d);
    assert.equal(
      r.output,
      'Overwrote "f.txt" (2 lines, 3 bytes).\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file',
    );
  });
});

Deno.test("write_file gives no diff for a binary or over-1-MiB previous file", async () => {
  await withDirs(async (d) => {
    await Deno.writeFile(join(d.ws, "b.bin"), new Uint8Array([1, 0, 2]));
    assert.equal(
      (await run(write, { file_path: "b.bin", content: "t" }, d)).output,
      'Overwrote "b.bin" (1 line, 1 byte).',
    );
    await Deno.writeTextFile(join(d.ws, "huge.txt"), "z".repeat(1024 * 1024 + 1));
    assert.equal(
      (await run(write, { file_path: "huge.txt", content: "small\n" }, d)).output,
      'Overwrote "huge.txt" (1 line, 6 bytes).',
    );
  });
});

Deno.test("write_file keeps the mode of an overwritten file and leaves no temp files", async () => {
  await withDirs(async (d) => {
    const f = join(d.ws, "script.sh");
    await Deno.writeTextFile(f, "#!/bin/sh\n");
    await Deno.chmod(f, 0o751);
    await run(write, { file_path: "script.sh", content: "#!/bin/sh\necho hi\n" }, d);
    assert.equal((await Deno.stat(f)).mode! & 0o777, 0o751);
    assert.deepEqual(await entries(d.ws), ["script.sh"]);
  });
});

Deno.test("write_file refuses directories and reports write errors as failed outputs", async () => {
  await withDirs(async (d) => {
    await Deno.mkdir(join(d.ws, "dir"));
    const dir = await run(write, { file_path: "dir", content: "x" }, d);
    assert.equal(dir.output, 'Cannot write "dir": it is a directory.');
    assert.equal(dir.status, "failed");
    await Deno.writeTextFile(join(d.ws, "a.txt"), "file");
    const under = await run(write, { file_path: "a.txt/x.txt", content: "x" }, d);
    assert.ok(under.output.startsWith('Failed to write "a.txt/x.txt": '), under.output);
    assert.equal(under.status, "failed");
    assert.equal(await Deno.readTextFile(join(d.ws, "a.txt")), "file");
  });
});

Deno.test("write_file rejects bad arguments naming the parameter, and writes nothing", async () => {
  await withDirs(async (d) => {
    const missing = await run(write, { file_path: "f.txt" }, d);
    assert.ok(
      missing.output.startsWith('write_file was not run: required argument "content" is missing.'),
    );
    const typed = await run(write, { file_path: "f.txt", content: 42 }, d);
    assert.ok(
      typed.output.startsWith(
        'write_file was not run: argument "content" must be a string, but a number',
      ),
    );
    const empty = await run(write, { file_path: "", content: "x" }, d);
    assert.ok(
      empty.output.startsWith('write_file was not run: required argument "file_path" is empty.'),
    );
    assert.equal(await readOrUndefined(join(d.ws, "f.txt")), undefined);
  });
});
