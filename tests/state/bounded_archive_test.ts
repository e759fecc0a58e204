// Archives are measured while they are decompressed: gunzip gives back
// exactly what was packed however it is sliced, refuses past its limit, and
// a skill directory's file is refused from its size before it is read.
import assert from "node:assert/strict";
import { join } from "node:path";
import { gunzip, gunzipFile, gzip, GZIP_INPUT_SLICE } from "../../lib/state/_gzip.ts";
import { installSkill, SKILL_LIMITS } from "../../lib/state/skills.ts";
import { withTempDir } from "../support/roots.ts";

/** Bytes this process has read so far (`rchar` of /proc/self/io). */
function bytesRead(): number {
  return Number(/^rchar: (\d+)$/m.exec(Deno.readTextFileSync("/proc/self/io"))![1]);
}

Deno.test("gunzip and gunzipFile give back exactly the packed bytes, across many input slices", async () => {
  // Bytes that do not compress (xorshift), so the archive spans many input slices.
  const data = new Uint8Array(40 * GZIP_INPUT_SLICE + 123);
  let x = 0x9e3779b9;
  for (let i = 0; i < data.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    data[i] = x & 0xff;
  }
  const packed = await gzip(data);
  assert.ok(packed.length > 10 * GZIP_INPUT_SLICE);
  assert.deepEqual(await gunzip(packed, data.length), data);
  assert.equal(await gunzip(packed, data.length - 1), undefined);
  await withTempDir("penguin-gzip-", async (dir) => {
    const file = join(dir, "a.gz");
    await Deno.writeFile(file, packed);
    assert.deepEqual(await gunzipFile(file, data.length), data);
    assert.equal(await gunzipFile(file, data.length - 1), undefined);
    await Deno.writeFile(file, data.subarray(0, 1000));
    await assert.rejects(gunzipFile(file, 1 << 20));
  });
});

Deno.test("skills install from a directory refuses a file over the limit from its size, unread", async () => {
  await withTempDir("penguin-skill-dir-", async (dir) => {
    const skill = join(dir, "skill");
    await Deno.mkdir(skill);
    await Deno.writeTextFile(join(skill, "SKILL.md"), "---\nname: big\ndescription: d\n---\n");
    {
      using f = await Deno.open(join(skill, "data.bin"), { write: true, create: true });
      await f.truncate(SKILL_LIMITS.bytes + 1);
    }
    const before = bytesRead();
    await assert.rejects(
      installSkill(join(dir, "skills"), skill),
      /Cannot install the skill from ".*skill": more than 64 MiB once unpacked/,
    );
    const read = bytesRead() - before;
    assert.ok(read < 1024 * 1024, `read ${read} bytes of a skill it refused`);
  });
});
