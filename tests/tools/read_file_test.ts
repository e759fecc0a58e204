import assert from "node:assert/strict";
import { join } from "node:path";
import { createReadFileTool, READ_FILE_DEFINITION } from "../../lib/tools/read_file.ts";
import { type Dirs, type Run, run, withDirs } from "./_support.ts";

const read = createReadFileTool();

function row(n: number, text: string): string {
  return `${String(n).padStart(6)}\t${text}`;
}

/** Write `text` to the workspace file `name`, then read_file it. */
async function readNew(d: Dirs, name: string, text: string): Promise<Run> {
  await Deno.writeTextFile(join(d.ws, name), text);
  return await run(read, { file_path: name }, d);
}

Deno.test("read_file numbers lines with a 6-wide right-aligned number and a tab", async () => {
  await withDirs(async (d) => {
    const r = await readNew(d, "f.txt", "alpha\n\tbeta\n");
    assert.equal(r.output, "     1\talpha\n     2\t\tbeta");
    assert.equal(r.status, "completed");
    await Deno.writeTextFile(join(d.ws, "g.txt"), "no newline at end");
    assert.equal((await run(read, { file_path: "g.txt" }, d)).output, row(1, "no newline at end"));
  });
});

Deno.test("read_file cuts lines over 2000 chars with a marker", async () => {
  await withDirs(async (d) => {
    const r = await readNew(d, "long.txt", "x".repeat(2500) + "\nshort\n");
    assert.equal(r.output, `${row(1, "x".repeat(2000))}… [line truncated]\n${row(2, "short")}`);
  });
});

Deno.test("read_file drops the \\r of CRLF lines and says the file uses CRLF", async () => {
  await withDirs(async (d) => {
    const r = await readNew(d, "w.txt", "one\r\ntwo\r\n");
    assert.equal(r.output, `${row(1, "one")}\n${row(2, "two")}\n(file uses CRLF line endings)`);
  });
});

Deno.test("read_file windows with offset and limit and says how to continue", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.ws, "f.txt"), "1\n2\n3\n4\n5\n");
    const first = await run(read, { file_path: "f.txt", limit: 2 }, d);
    assert.equal(
      first.output,
      `${row(1, "1")}\n${
        row(2, "2")
      }\n[file has 5 lines total; showing 1-2 — call again with offset to continue]`,
    );
    const mid = await run(read, { file_path: "f.txt", offset: "2", limit: 2.9 }, d);
    assert.equal(
      mid.output,
      `${row(2, "2")}\n${
        row(3, "3")
      }\n[file has 5 lines total; showing 2-3 — call again with offset to continue]`,
    );
    const tail = await run(read, { file_path: "f.txt", offset: 4 }, d);
    assert.equal(tail.output, `${row(4, "4")}\n${row(5, "5")}`);
    const floor = await run(read, { file_path: "f.txt", offset: -3, limit: 1 }, d);
    assert.ok(floor.output.startsWith(row(1, "1")));
  });
});

Deno.test("read_file keeps its output under its own budget and says the limit was reached", async () => {
  await withDirs(async (d) => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1} ${"y".repeat(40)}`);
    await Deno.writeTextFile(join(d.ws, "f.txt"), lines.join("\n") + "\n");
    const small = createReadFileTool({ ...READ_FILE_DEFINITION, maxOutputLength: 1000 });
    const r = await run(small, { file_path: "f.txt" }, d);
    const shown = r.output.split("\n").length - 1;
    assert.ok(r.output.length <= 1000);
    assert.ok(
      r.output.endsWith(
        `\n[file has 100 lines total; showing 1-${shown} (output limit reached) — call again with offset to continue]`,
      ),
    );
    assert.equal(r.output.split("\n")[shown - 1], row(shown, lines[shown - 1]!));
  });
});

Deno.test("read_file on an empty file completes with the empty-file message", async () => {
  await withDirs(async (d) => {
    const r = await readNew(d, "e.txt", "");
    assert.equal(r.output, '"e.txt" is an empty file (0 lines).');
    assert.equal(r.status, "completed");
  });
});

Deno.test("read_file refuses binary files, directories and offsets past the end", async () => {
  await withDirs(async (d) => {
    await Deno.writeFile(join(d.ws, "b.bin"), new Uint8Array([0x41, 0x00, 0x42]));
    const bin = await run(read, { file_path: "b.bin" }, d);
    assert.equal(
      bin.output,
      '"b.bin" looks like a binary file (contains NUL bytes). Use shell commands to inspect it.',
    );
    assert.equal(bin.status, "failed");
    await Deno.mkdir(join(d.ws, "dir"));
    const dir = await run(read, { file_path: "dir" }, d);
    assert.equal(
      dir.output,
      'Cannot read "dir": it is a directory. Pass the path of a file inside it.',
    );
    await Deno.writeTextFile(join(d.ws, "f.txt"), "a\nb\nc\n");
    const past = await run(read, { file_path: "f.txt", offset: 10 }, d);
    assert.equal(past.output, 'Offset 10 is past the end of "f.txt" (3 lines total).');
    assert.equal(past.status, "failed");
    await Deno.writeTextFile(join(d.ws, "one.txt"), "a");
    const one = await run(read, { file_path: "one.txt", offset: 3 }, d);
    assert.equal(one.output, 'Offset 3 is past the end of "one.txt" (1 line total).');
  });
});

Deno.test("read_file's not-found message points at where the path stops existing", async () => {
  await withDirs(async (d) => {
    const lead = `File not found: "nope.txt". Absolute paths inside the workspace are supported; ` +
      `relative paths resolve against the workspace (${d.ws}).`;
    const empty = await run(read, { file_path: "nope.txt" }, d);
    assert.equal(
      empty.output,
      `${lead} The directory "${d.ws}" exists but has no entry "nope.txt". It is empty.`,
    );
    assert.equal(empty.status, "failed");

    await Deno.mkdir(join(d.ws, "agent_state"));
    await Deno.mkdir(join(d.ws, "agents"));
    await Deno.writeTextFile(join(d.ws, "AGENTS.md"), "");
    for (let i = 0; i < 10; i++) await Deno.writeTextFile(join(d.ws, `zz${i}.txt`), "");
    const near = await run(read, { file_path: "agent_stat/system_config.yaml" }, d);
    const hint = near.output.slice(near.output.indexOf(" The directory"));
    assert.equal(
      hint,
      ` The directory "${d.ws}" exists but has no entry "agent_stat". It contains: ` +
        `agent_state/, AGENTS.md, agents/, zz0.txt, zz1.txt, zz2.txt, zz3.txt, zz4.txt (+5 more).`,
    );

    await Deno.writeTextFile(join(d.ws, "a.txt"), "x");
    const asDir = await run(read, { file_path: "a.txt/inner" }, d);
    assert.ok(
      asDir.output.endsWith(
        ` Note: "${join(d.ws, "a.txt")}" exists but is a file, not a directory.`,
      ),
    );
  });
});

Deno.test("read_file reports a lower bound when the 8 MiB scan cap ends the count", async () => {
  await withDirs(async (d) => {
    const line = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n"; // 64 bytes
    const body = line.repeat((9 * 1024 * 1024) / 64);
    await Deno.writeTextFile(join(d.ws, "big.log"), body);
    const r = await run(read, { file_path: "big.log", limit: 2 }, d);
    const capLines = (8 * 1024 * 1024) / 64;
    assert.ok(
      r.output.endsWith(
        `[file has more than ${capLines} lines; showing 1-2 — call again with offset to continue]`,
      ),
    );
    const deep = await run(read, { file_path: "big.log", offset: capLines + 10, limit: 5 }, d);
    assert.equal(
      deep.output,
      `Stopped after scanning 8 MB of "big.log" without reaching the requested window (scanned ${capLines} lines). ` +
        `The offset is too deep or the file has extremely long lines — use shell commands ` +
        `(e.g. sed -n '${capLines + 10},${capLines + 14}p') for this file.`,
    );
    assert.equal(deep.status, "failed");
  });
});

Deno.test("read_file rejects bad arguments with a failed output naming the parameter", async () => {
  await withDirs(async (d) => {
    const missing = await run(read, {}, d);
    assert.ok(
      missing.output.startsWith('read_file was not run: required argument "file_path" is missing.'),
    );
    assert.ok(missing.output.includes("\n- file_path (string, required): "));
    assert.equal(missing.status, "failed");
    const typed = await run(read, { file_path: 7 }, d);
    assert.ok(
      typed.output.startsWith(
        'read_file was not run: argument "file_path" must be a string, but a number',
      ),
    );
    const limit = await run(read, { file_path: "f.txt", limit: 0 }, d);
    assert.ok(
      limit.output.startsWith(
        'read_file was not run: argument "limit" is invalid: expected a positive number',
      ),
    );
    const offset = await run(read, { file_path: "f.txt", offset: "ten", path: "x" }, d);
    assert.ok(
      offset.output.startsWith(
        'read_file was not run: argument "offset" is invalid: expected a number',
      ),
    );
    assert.ok(offset.output.includes("Not a parameter of read_file: path."));
  });
});

Deno.test("read_file stops with aborted when the signal fires", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.ws, "f.txt"), "a\n");
    const ac = new AbortController();
    ac.abort();
    const r = await run(read, { file_path: "f.txt" }, d, { signal: ac.signal });
    assert.equal(r.status, "aborted");
    assert.equal(r.output, "[interrupted: tool aborted by user]");
  });
});
