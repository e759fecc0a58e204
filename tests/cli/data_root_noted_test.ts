// Every penguin command notes its data root so that other sessions' plans hide it, including a
// command that creates the root (a vault set before any model is configured).
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { knownDataRoots } from "../../lib/sandbox/_data_roots.ts";
import { visibleTempDir } from "../sandbox/_helpers.ts";

Deno.test("a data root made by `config vault set` is in the list of data roots afterwards", async () => {
  const base = await visibleTempDir("penguin-noted-");
  try {
    const root = join(base, "victim");
    const r = await runCli([
      "--root",
      root,
      "config",
      "vault",
      "set",
      "--key",
      "OTHER",
      "--value",
      "SECRETvalue-0123456789abcdef",
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok((await knownDataRoots()).includes(root));
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
