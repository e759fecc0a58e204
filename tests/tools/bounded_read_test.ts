// Bounded reads of the file tools: a file over a tool's limit is refused
// from its size before it is read, the refusal names the size and the limit,
// an edit cannot grow a file past the limit, and an abort stops a read
// between two chunks (Deno.readFile kept reading after its signal fired).
import assert from "node:assert/strict";
import { join } from "node:path";
import { readFileBounded } from "../../lib/tools/_bounded_read.ts";
import { createEditFileTool } from "../../lib/tools/edit_file.ts";
import { createReadImageTool } from "../../lib/tools/read_image.ts";
import { createWriteFileTool } from "../../lib/tools/write_file.ts";
import {
  EDIT_FILE_MAX_BYTES,
  formatSize,
  IMAGE_MAX_BYTES,
  READ_CHUNK_BYTES,
} from "../../lib/tools/file_limits.ts";
import { run, withDirs } from "./_support.ts";

/** A sparse file of `size` bytes (zeros that take no disk space). */
async function sparse(path: string, size: number): Promise<void> {
  using f = await Deno.open(path, { write: true, create: true });
  await f.truncate(size);
}

/** Bytes this process has read so far (`rchar` of /proc/self/io). */
/**
 * Reads the whole process may make meanwhile: `rchar` counts every read of the process (pipes of
 * other test modules' subprocesses under `--parallel` too). Far below the GiB a file of these
 * tests would cost if read, so a tool that reads it still fails.
 */
const READ_NOISE = 256 * 1024 * 1024;

function bytesRead(): number {
  return Number(/^rchar: (\d+)$/m.exec(Deno.readTextFileSync("/proc/self/io"))![1]);
}

Deno.test("formatSize names sizes in binary units", () => {
  assert.equal(formatSize(812), "812 B");
  assert.equal(formatSize(16 * 1024 * 1024), "16 MiB");
  assert.equal(formatSize(12 * 1024 ** 3), "12 GiB");
  assert.equal(formatSize(12.04 * 1024 ** 3), "12.0 GiB");
  assert.equal(formatSize(1536), "1.5 KiB");
});

Deno.test("edit_file refuses a file over its limit from the size alone, naming the size and the limit", async () => {
  await withDirs(async (d) => {
    const path = join(d.ws, "big.txt");
    // 1 GiB: a read of it would stand far above what the other test modules of this process
    // read meanwhile (`rchar` is process-wide; 16 MiB + 1 did not, under --parallel).
    await sparse(path, 1024 ** 3);
    const before = bytesRead();
    const r = await run(
      createEditFileTool(),
      { file_path: "big.txt", old_string: "a", new_string: "b" },
      d,
    );
    const read = bytesRead() - before;
    assert.equal(r.status, "failed");
    assert.match(
      r.output,
      /^Cannot edit "big\.txt": it is 1 GiB; edit_file reads files up to 16 MiB\. /,
    );
    // Process-wide bytes (other test files read in this process too): well under the file's size.
    assert.ok(read < READ_NOISE, `read ${read} bytes of a file it refused`);
    assert.equal((await Deno.stat(path)).size, 1024 ** 3, "left as it was");
  });
});

Deno.test("edit_file refuses an edit whose result would pass the limit, and leaves the file", async () => {
  await withDirs(async (d) => {
    const path = join(d.ws, "a.txt");
    const text = "a\n".repeat(256 * 1024); // 512 KiB, 262144 occurrences
    await Deno.writeTextFile(path, text);
    const r = await run(
      createEditFileTool(),
      { file_path: "a.txt", old_string: "a", new_string: "b".repeat(100), replace_all: true },
      d,
    );
    assert.equal(r.status, "failed");
    assert.match(
      r.output,
      /^Cannot edit "a\.txt": the edited text would be 25\.3 MiB or more; edit_file writes files up to 16 MiB\./,
    );
    assert.equal(await Deno.readTextFile(path), text);
  });
});

Deno.test("a file at the limit is still edited", async () => {
  await withDirs(async (d) => {
    const path = join(d.ws, "full.txt");
    const text = "x".repeat(EDIT_FILE_MAX_BYTES - 5) + "\nEND\n";
    await Deno.writeTextFile(path, text);
    const r = await run(
      createEditFileTool(),
      { file_path: "full.txt", old_string: "END", new_string: "FIN" },
      d,
    );
    assert.equal(r.status, "completed", r.output);
    assert.equal((await Deno.stat(path)).size, EDIT_FILE_MAX_BYTES);
  });
});

Deno.test("write_file overwrites a file over its diff limit without reading it", async () => {
  await withDirs(async (d) => {
    const path = join(d.ws, "big.bin");
    await sparse(path, 4 * 1024 ** 3);
    const before = bytesRead();
    const r = await run(createWriteFileTool(), { file_path: "big.bin", content: "small\n" }, d);
    assert.ok(bytesRead() - before < READ_NOISE);
    assert.equal(r.status, "completed", r.output);
    assert.equal(await Deno.readTextFile(path), "small\n");
  });
});

Deno.test("read_image refuses a file over its limit without reading it", async () => {
  await withDirs(async (d) => {
    await sparse(join(d.ws, "huge.png"), 3 * 1024 ** 3);
    const before = bytesRead();
    const r = await run(createReadImageTool(), { source: "huge.png" }, d);
    assert.ok(bytesRead() - before < READ_NOISE);
    assert.equal(r.status, "failed");
    assert.match(r.output, /it is 3072\.00 MB, over the 5 MB limit/);
    assert.equal(IMAGE_MAX_BYTES, 5 * 1024 * 1024);
  });
});

Deno.test("readFileBounded stops within a chunk of an abort", async () => {
  await withDirs(async (d) => {
    const path = join(d.ws, "slow.bin");
    // 1 GiB: read on past the abort, it would stand far above what the other test modules of
    // this process read meanwhile (`rchar` is process-wide).
    await sparse(path, 1024 * READ_CHUNK_BYTES);
    const ctl = new AbortController();
    // The abort arrives while the read is under way: on the second look at the signal.
    let looks = 0;
    const signal = new Proxy(ctl.signal, {
      get(target, key) {
        if (key === "aborted" && ++looks === 2) ctl.abort();
        const v = Reflect.get(target, key, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const before = bytesRead();
    const r = await readFileBounded(path, 2048 * READ_CHUNK_BYTES, signal);
    const read = bytesRead() - before;
    assert.deepEqual(r, { ok: false, reason: "aborted" });
    // The look that saw the abort was the last: no chunk was read after it.
    assert.equal(looks, 2);
    assert.ok(read < READ_NOISE, `read ${read} bytes after the abort`);
  });
});

Deno.test("readFileBounded reads a file up to its limit and refuses one past it", async () => {
  await withDirs(async (d) => {
    const path = join(d.ws, "f.txt");
    await Deno.writeTextFile(path, "0123456789");
    const signal = new AbortController().signal;
    const ok = await readFileBounded(path, 10, signal);
    assert.ok(ok.ok);
    assert.equal(new TextDecoder().decode(ok.bytes), "0123456789");
    assert.deepEqual(await readFileBounded(path, 9, signal), {
      ok: false,
      reason: "too-large",
      size: 10,
      grew: false,
    });
  });
});

Deno.test({
  name: "readFileBounded refuses a FIFO without opening it (an open would wait for a writer)",
  ignore: Deno.build.os === "windows",
  async fn() {
    await withDirs(async (d) => {
      const fifo = join(d.ws, "pipe");
      const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
      assert.ok(made.success);
      const r = await readFileBounded(fifo, 1024, new AbortController().signal);
      assert.deepEqual(r, { ok: false, reason: "not-a-file" });
    });
  },
});
