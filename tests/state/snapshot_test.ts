import assert from "node:assert/strict";
import { join } from "node:path";
import { packTar } from "modern-tar";
import { readSnapshot, type SnapshotLimits } from "../../lib/state/snapshot.ts";
import { withTempDir } from "../support/roots.ts";

async function gzipFile(path: string, tar: Uint8Array): Promise<void> {
  const stream = new Blob([tar as BlobPart]).stream().pipeThrough(new CompressionStream("gzip"));
  await Deno.writeFile(path, new Uint8Array(await new Response(stream).arrayBuffer()));
}

const config = {
  header: { name: "agent_state/system_config.yaml", size: 0, type: "file" as const },
  body: 'version: 2\nsystem_prompt: "p"\n',
};
config.header.size = config.body.length;

function files(n: number, size: number) {
  return Array.from({ length: n }, (_, i) => ({
    header: { name: `agent_state/f${i}`, size, type: "file" as const },
    body: "x".repeat(size),
  }));
}

const LIMITS: SnapshotLimits = { files: 3, bytes: 4096, archiveBytes: 64 * 1024 };

Deno.test("readSnapshot enforces the file count, the unpacked size and the archive size", async () => {
  await withTempDir("penguin-snapshot-", async (dir) => {
    const path = join(dir, "s.tar.gz");
    await gzipFile(path, await packTar([config, ...files(2, 10)]));
    const okay = await readSnapshot(path, join(dir, "agent"), LIMITS);
    assert.equal(okay.version, 2);
    assert.deepEqual(okay.files.map((f) => f.path), ["system_config.yaml", "f0", "f1"]);

    await gzipFile(path, await packTar([config, ...files(3, 10)]));
    await assert.rejects(readSnapshot(path, join(dir, "agent"), LIMITS), /holds more than 3 files/);

    // Compresses to little, unpacks past the limit: refused while unpacking.
    await gzipFile(path, await packTar([config, ...files(1, 64 * 1024)]));
    assert.ok((await Deno.stat(path)).size < LIMITS.archiveBytes);
    await assert.rejects(readSnapshot(path, join(dir, "agent"), LIMITS), /unpacks to more than/);

    await Deno.writeFile(path, new Uint8Array(65 * 1024));
    await assert.rejects(
      readSnapshot(path, join(dir, "agent"), LIMITS),
      /is larger than 0\.0625 MiB/,
    );
  });
});
