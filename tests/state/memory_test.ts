// Reading and clearing memory scopes that a hostile model has written:
// links, FIFOs and files swapped in while penguin reads are refused, and
// clearing removes links, never what they point to.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  clearMemoryScope,
  listMemoryTopics,
  MEMORY_INDEX,
  readMemoryFile,
} from "../../lib/state/memory.ts";
import { withTempDir } from "../support/roots.ts";

const SECRET = "secret-marker-6081";

async function scope(base: string): Promise<{ dir: string; secret: string }> {
  const dir = join(base, "memory", "user");
  await Deno.mkdir(dir, { recursive: true });
  const secret = join(base, ".vault.toml");
  await Deno.writeTextFile(secret, `# ${SECRET}\n`);
  return { dir, secret };
}

Deno.test("readMemoryFile reads regular files and refuses links, FIFOs, directories and paths", async () => {
  await withTempDir("penguin-mem-", async (base) => {
    const { dir, secret } = await scope(base);
    await Deno.writeTextFile(join(dir, MEMORY_INDEX), "- a.md: A\n");
    const ok = await readMemoryFile(dir, MEMORY_INDEX);
    assert.deepEqual(ok, { ok: true, text: "- a.md: A\n", truncated: false });
    await Deno.symlink(secret, join(dir, "abs.md"));
    await Deno.symlink("../../.vault.toml", join(dir, "rel.md"));
    await Deno.mkdir(join(dir, "sub.md"));
    await new Deno.Command("mkfifo", { args: [join(dir, "fifo.md")] }).output();
    await Deno.link(secret, join(dir, "hard.md"));
    const names = ["abs.md", "rel.md", "sub.md", "fifo.md", "hard.md", "../../.vault.toml", "a/b"];
    for (const name of names) {
      const r = await readMemoryFile(dir, name);
      assert.equal(r.ok, false, name);
      assert.ok(!JSON.stringify(r).includes(SECRET), name);
    }
    const missing = await readMemoryFile(dir, "none.md");
    assert.equal(!missing.ok && missing.missing, true);
  });
});

Deno.test("a file swapped for a link to a secret while penguin reads is never read through", async () => {
  await withTempDir("penguin-mem-race-", async (base) => {
    const { dir, secret } = await scope(base);
    const index = join(dir, MEMORY_INDEX);
    await Deno.writeTextFile(index, "- safe.md: safe\n");
    // A real process swaps the index for a link and back, atomically, until killed (with its
    // whole process group: an `mv` it started must not write on after the test has cleaned up).
    const racer = new Deno.Command("setsid", {
      args: [
        "bash",
        "-c",
        `cd '${dir}'; i=0; while :; do printf -- '- safe.md: safe\\n' > t1 && mv -f t1 MEMORY.md; ` +
        `ln -s '${secret}' t2 && mv -f t2 MEMORY.md; i=$((i+1)); ` +
        `[ $i = 1 ] && echo started; done`,
      ],
      stdout: "piped",
      stderr: "null",
    }).spawn();
    try {
      const reader = racer.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let seen = "";
      while (!seen.includes("started")) seen += (await reader.read()).value ?? "";
      reader.releaseLock();
      for (let i = 0; i < 2000; i++) {
        const r = await readMemoryFile(dir, MEMORY_INDEX);
        if (r.ok) {
          assert.ok(!r.text.includes(SECRET), "the secret was read through a swapped link");
        }
      }
    } finally {
      Deno.kill(-racer.pid, "SIGKILL");
      await racer.status;
      await racer.stdout.cancel().catch(() => {});
    }
  });
});

Deno.test("clearing a scope removes links, not their targets, and leaves an empty index", async () => {
  await withTempDir("penguin-mem-clear-", async (base) => {
    const { dir, secret } = await scope(base);
    await Deno.writeTextFile(join(dir, MEMORY_INDEX), "- a.md: A\n");
    await Deno.writeTextFile(
      join(dir, "a.md"),
      "---\nname: a\ndescription: the A topic\nupdated_at: 2026-12-01\n---\nbody\n",
    );
    await Deno.symlink(secret, join(dir, "link.md"));
    await Deno.symlink(base, join(dir, "up"));
    await Deno.writeTextFile(join(dir, ".workspace"), "/w\n");
    assert.deepEqual(await listMemoryTopics(dir), [
      { file: "a.md", name: "a", description: "the A topic", updatedAt: "2026-12-01" },
    ]);
    assert.equal(await clearMemoryScope(dir), 3);
    assert.equal(await Deno.readTextFile(secret), `# ${SECRET}\n`);
    assert.equal(await Deno.readTextFile(join(dir, MEMORY_INDEX)), "");
    assert.equal(await Deno.readTextFile(join(dir, ".workspace")), "/w\n");
    const left = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();
    assert.deepEqual(left, [".workspace", MEMORY_INDEX]);
    assert.ok((await Deno.stat(join(base, "memory"))).isDirectory);
  });
});
