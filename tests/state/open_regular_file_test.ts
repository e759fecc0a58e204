// openRegularFile (lib/state/_fs.ts), the one "regular files only" open every reader of a
// user-named file uses (review s38, finding 8): a FIFO, a link to a device and a directory are
// refused unopened (opening a FIFO would wait for a writer: these tests would hang), a missing
// file is a not_found PenguinError, and each refusal is worded the same. Its callers: the trace
// readers (openTrace, followLines — which gave a raw Deno error for a missing file), batch inputs.
import assert from "node:assert/strict";
import { join } from "node:path";
import { NOT_REGULAR_FILE, openRegularFile, openRegularNow } from "../../lib/state/_fs.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { followLines, openTrace } from "../../lib/trace/lines.ts";
import { readBatchInput } from "../../lib/batch/input_file.ts";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "penguin-regular-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A FIFO, a link to /dev/zero, a directory, a regular file and a missing name in `dir`. */
async function kinds(dir: string) {
  const fifo = join(dir, "fifo");
  const mk = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.equal(mk.code, 0, "mkfifo failed");
  const zero = join(dir, "zero");
  await Deno.symlink("/dev/zero", zero);
  const sub = join(dir, "sub");
  await Deno.mkdir(sub);
  const file = join(dir, "file");
  await Deno.writeTextFile(file, "hello\n");
  return { fifo, zero, sub, file, missing: join(dir, "missing") };
}

/** The PenguinError `promise` rejects with. */
async function refusal(promise: Promise<unknown>): Promise<PenguinError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof PenguinError, `not a PenguinError: ${err}`);
    return err;
  }
  assert.fail("it was not refused");
}

Deno.test("openRegularFile opens a regular file and a link to one", async () => {
  await withDir(async (dir) => {
    const { file } = await kinds(dir);
    const link = join(dir, "link");
    await Deno.symlink(file, link);
    for (const p of [file, link]) {
      using f = await openRegularFile(p);
      assert.equal(
        new TextDecoder().decode(await new Response(f.readable).arrayBuffer()),
        "hello\n",
      );
    }
  });
});

Deno.test("openRegularFile refuses a FIFO, a device and a directory unopened, worded the same", async () => {
  await withDir(async (dir) => {
    const { fifo, zero, sub, missing } = await kinds(dir);
    for (const p of [fifo, zero]) {
      const e = await refusal(openRegularFile(p));
      assert.equal(e.kind, "data");
      assert.equal(e.message, `Cannot read "${p}": ${NOT_REGULAR_FILE}`);
    }
    assert.equal(NOT_REGULAR_FILE, "it is not a regular file (a FIFO, device or socket)");
    const d = await refusal(openRegularFile(sub, { label: "Cannot load", kind: "usage" }));
    assert.deepEqual([d.kind, d.message], ["usage", `Cannot load "${sub}": it is a directory`]);
    const m = await refusal(openRegularFile(missing, { kind: "usage" }));
    assert.deepEqual([m.kind, m.message], ["not_found", `Cannot read "${missing}": no such file`]);
  });
});

Deno.test("trace readers: the same refusals, and a missing file followed is not_found", async () => {
  await withDir(async (dir) => {
    const { fifo, zero, sub, missing } = await kinds(dir);
    for (const p of [fifo, zero]) {
      const opened = await refusal(openTrace(p));
      const followed = await refusal(followLines(p));
      for (const e of [opened, followed]) {
        assert.deepEqual([e.kind, e.message], [
          "data",
          `Cannot read trace "${p}": ${NOT_REGULAR_FILE}`,
        ]);
      }
    }
    const d = await refusal(followLines(sub));
    assert.equal(d.message, `Cannot read trace "${sub}": it is a directory`);
    const m = await refusal(followLines(missing));
    assert.deepEqual([m.kind, m.message], [
      "not_found",
      `Cannot read trace "${missing}": no such file`,
    ]);
  });
});

Deno.test("batch inputs: the same refusals, and a missing file is undefined", async () => {
  await withDir(async (dir) => {
    const { fifo, zero, file, missing } = await kinds(dir);
    const label = "batch report: cannot read the results file";
    for (const p of [fifo, zero]) {
      const e = await refusal(readBatchInput(p, label, 1024, "runtime"));
      assert.deepEqual([e.kind, e.message], ["runtime", `${label} "${p}": ${NOT_REGULAR_FILE}`]);
    }
    assert.equal(await readBatchInput(missing, label, 1024), undefined);
    assert.equal(await readBatchInput(file, label, 1024), "hello\n");
    const big = await refusal(readBatchInput(file, label, 3));
    assert.equal(big.message, `${label} "${file}": it holds more than 3 B`);
  });
});

Deno.test("openRegularNow never waits on a FIFO and reads only a regular file (round 29 k06)", async () => {
  await withDir(async (dir) => {
    const { fifo, zero, sub, file, missing } = await kinds(dir);
    // A FIFO nobody writes: a blocking open would wait here for ever.
    for (const p of [fifo, zero, sub]) {
      assert.throws(() => openRegularNow(p), /is not a regular file|EISDIR/, p);
    }
    assert.throws(() => openRegularNow(missing), (err: Error & { code?: string }) => {
      return err.code === "ENOENT";
    });
    using f = openRegularNow(file);
    assert.equal(f.size, 6);
    const buf = new Uint8Array(16);
    const n = f.read(buf);
    assert.equal(new TextDecoder().decode(buf.subarray(0, n)), "hello\n");
    assert.equal(f.read(buf), 0);
  });
});

Deno.test("sessions import of a FIFO in a session file's place is refused at once", async () => {
  await withDir(async (dir) => {
    const { fifo } = await kinds(dir);
    const { readForeignSession } = await import("../../lib/session/import_foreign.ts");
    await assert.rejects(() => readForeignSession(fifo, "codex"), /is not a regular file/);
  });
});

Deno.test({
  name: "openRegularNow never opens what is not a regular file, not even for a moment (round 31)",
  ignore: Deno.build.os !== "linux" || !(() => {
    try {
      return Deno.statSync("/usr/bin/setsid").isFile;
    } catch {
      return false;
    }
  })(),
  fn: async () => {
    // `/dev/tty` opened by a process without a controlling terminal fails (ENXIO): what it says
    // tells whether it was opened. An open of a device may act by itself (a watchdog, a tape).
    const url = new URL("../../lib/state/_fs.ts", import.meta.url).href;
    const o = await new Deno.Command("setsid", {
      args: [
        Deno.execPath(),
        "eval",
        `import { openRegularNow } from ${JSON.stringify(url)};` +
        `try { openRegularNow("/dev/tty"); } catch (e) { console.log(e.code ?? "", e.message); }`,
      ],
      stdin: "null",
    }).output();
    const out = new TextDecoder().decode(o.stdout);
    assert.match(out, /"\/dev\/tty" is not a regular file/, out);
    assert.doesNotMatch(out, /ENXIO/);
  },
});
