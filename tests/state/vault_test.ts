import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../support/roots.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";
import {
  loadVault,
  parseVault,
  removeVaultEntry,
  saveVault,
  setVaultEntry,
  VAULT_VALUE_MAX,
} from "../../lib/state/vault.ts";

const withTemp = (fn: (dir: string) => Promise<void>) => withTempDir("penguin-vault-", fn);

Deno.test("vault: missing file is empty; set writes 0600; emptying removes the file", async () => {
  await withTemp(async (dir) => {
    const path = join(dir, "agent_state", ".vault.toml");
    assert.deepEqual(await loadVault(path), {});
    await setVaultEntry(path, "GITHUB_TOKEN", "ghp_secret");
    await setVaultEntry(path, "_X2", 'a "quoted"\nvalue');
    assert.deepEqual(await loadVault(path), {
      GITHUB_TOKEN: "ghp_secret",
      _X2: 'a "quoted"\nvalue',
    });
    if (Deno.build.os !== "windows") {
      await Deno.chmod(path, 0o644);
      await setVaultEntry(path, "GITHUB_TOKEN", "ghp_other");
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    }
    assert.equal(await removeVaultEntry(path, "NOPE"), false);
    assert.equal(await removeVaultEntry(path, "GITHUB_TOKEN"), true);
    assert.equal(await removeVaultEntry(path, "_X2"), true);
    await assert.rejects(Deno.stat(path), Deno.errors.NotFound);
    await saveVault(path, {}); // removing an absent file is fine
  });
});

Deno.test("vault: keys must be env-var names and values at most 8192 chars", async () => {
  await withTemp(async (dir) => {
    const path = join(dir, ".vault.toml");
    for (const bad of ["1ABC", "A-B", "", "A B", "É"]) {
      await assert.rejects(setVaultEntry(path, bad, "v"), (err: unknown) => {
        assert.ok(err instanceof PenguinError);
        assert.equal(err.kind, "usage");
        assert.match(err.message, /Invalid vault key/);
        return true;
      });
    }
    await setVaultEntry(path, "MAX", "x".repeat(VAULT_VALUE_MAX));
    await assert.rejects(
      setVaultEntry(path, "BIG", "x".repeat(VAULT_VALUE_MAX + 1)),
      /limit is 8192/,
    );
    assert.deepEqual(Object.keys(await loadVault(path)), ["MAX"]);
  });
});

Deno.test("vault: on read, non-string values, invalid keys and oversize values are ignored", () => {
  const text = [
    'GOOD = "yes"',
    "NUM = 5",
    '"bad-key" = "v"',
    `HUGE = "${"y".repeat(VAULT_VALUE_MAX + 1)}"`,
    "[TABLE]",
    'x = "1"',
  ].join("\n");
  assert.deepEqual(parseVault(text, "f"), { GOOD: "yes" });
});

Deno.test("vault: a malformed file is a config error with the line and is left alone", async () => {
  await withTemp(async (dir) => {
    const path = join(dir, ".vault.toml");
    const bad = 'A = "1"\nB = \n';
    await Deno.writeTextFile(path, bad);
    await assert.rejects(
      setVaultEntry(path, "C", "3"),
      /^PenguinError: Cannot parse ".*\.vault\.toml": line 2, column \d+/,
    );
    assert.equal(await Deno.readTextFile(path), bad);
  });
});
