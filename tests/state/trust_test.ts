// The trust store of penguin.jsonc files: one private record per path, trusting one exact content.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  listTrust,
  readTrust,
  recordTrust,
  revokeTrust,
  sha256Hex,
  trustDir,
  trustStatus,
} from "../../lib/state/trust.ts";
import { withRoot } from "../support/roots.ts";

Deno.test("sha256Hex is the SHA-256 of the exact bytes", async () => {
  assert.equal(
    await sha256Hex("abc"),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
  assert.notEqual(await sha256Hex("{}\n"), await sha256Hex("{} \n"));
});

Deno.test("a record trusts one content at one path: a change or another path is not trusted", async () => {
  await withRoot(async (root) => {
    const a = "/ws/penguin.jsonc";
    const h1 = await sha256Hex('{ "git": "writable" }');
    const h2 = await sha256Hex('{ "git": "writable" } ');
    assert.equal(await trustStatus(root, a, h1), "untrusted");
    const rec = await recordTrust(root, a, h1, new Date("2026-01-02T03:04:05Z"));
    assert.deepEqual(rec, { path: a, sha256: h1, trusted_at: "2026-01-02T03:04:05.000Z" });
    assert.equal(await trustStatus(root, a, h1), "trusted");
    assert.equal(await trustStatus(root, a, h2), "changed");
    assert.equal(await trustStatus(root, "/ws/sub/penguin.jsonc", h1), "untrusted");
    // Private: the directory 0700, the record 0600.
    assert.equal((await Deno.stat(trustDir(root))).mode! & 0o777, 0o700);
    const [file] = await Array.fromAsync(Deno.readDir(trustDir(root)));
    assert.equal((await Deno.stat(join(trustDir(root), file!.name))).mode! & 0o777, 0o600);
    // Trusting again replaces the record.
    await recordTrust(root, a, h2);
    assert.equal(await trustStatus(root, a, h2), "trusted");
    assert.equal(await trustStatus(root, a, h1), "changed");
    assert.deepEqual((await listTrust(root)).map((r) => r.path), [a]);
  });
});

Deno.test("revoke forgets a path; list skips files that are not records of their name", async () => {
  await withRoot(async (root) => {
    const h = await sha256Hex("{}");
    await recordTrust(root, "/b/penguin.jsonc", h);
    await recordTrust(root, "/a/penguin.jsonc", h);
    // A record copied under another path's name, and junk, are no records.
    const other = join(trustDir(root), `${await sha256Hex("/c/penguin.jsonc")}.json`);
    await Deno.copyFile(join(trustDir(root), `${await sha256Hex("/a/penguin.jsonc")}.json`), other);
    await Deno.writeTextFile(join(trustDir(root), "junk.json"), "{ not json");
    assert.equal(await readTrust(root, "/c/penguin.jsonc"), undefined);
    assert.deepEqual((await listTrust(root)).map((r) => r.path), [
      "/a/penguin.jsonc",
      "/b/penguin.jsonc",
    ]);
    assert.equal(await revokeTrust(root, "/a/penguin.jsonc"), true);
    assert.equal(await revokeTrust(root, "/a/penguin.jsonc"), false);
    assert.equal(await trustStatus(root, "/a/penguin.jsonc", h), "untrusted");
    assert.deepEqual((await listTrust(root)).map((r) => r.path), ["/b/penguin.jsonc"]);
  });
});

Deno.test("an empty data root has no trusted file", async () => {
  await withRoot(async (root) => {
    assert.deepEqual(await listTrust(root), []);
    assert.equal(await revokeTrust(root, "/x/penguin.jsonc"), false);
  });
});
