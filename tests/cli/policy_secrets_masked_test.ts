// A command can write a vault value into a penguin.jsonc of a subdirectory of the workspace (only
// the workspace's own is protected while commands run); what penguin prints of such a file later —
// its parse error, the notes on settings it ignores or applies, `penguin trust`'s listing — is
// masked with the data root's secrets (attack round 21 secrets A22: they quoted the value raw).
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, runCliOk } from "../support/cli.ts";
import { visibleTempDir } from "../support/roots.ts";
import { BWRAP_USABLE as bwrap } from "../sandbox/_bwrap.ts";

const VALUE = "vlt-Q7c3a91e2d4b85f60zz";
const OTHER = "oth-Kp2Xw9Lm4Rt6Yh8Nb3";
const MARK = "[redacted:vault:DB_PW]";

async function withRoot(fn: (root: string, ws: string) => Promise<void>): Promise<void> {
  const base = await visibleTempDir("penguin-policy-secrets-");
  try {
    const root = join(base, "root");
    const ws = join(base, "ws");
    await Deno.mkdir(ws);
    await runCliOk(["--root", root, "config", "vault", "set", "--key", "DB_PW", "--value", VALUE]);
    await fn(root, ws);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
}

Deno.test("penguin.jsonc's parse error does not quote a vault value it holds", async () => {
  await withRoot(async (root, ws) => {
    await Deno.mkdir(join(ws, "sub"));
    await Deno.writeTextFile(join(ws, "sub", "penguin.jsonc"), `{\n "approval": "${VALUE}"\n}\n`);
    for (
      const args of [["run", "--workspace", join(ws, "sub"), "-m", "hi"], [
        "trust",
        join(ws, "sub"),
      ]]
    ) {
      const r = await runCli(["--root", root, ...args]);
      const out = r.stdout + r.stderr;
      assert.notEqual(r.code, 0);
      assert.match(out, /line 2, column 14: approval: expected one of/);
      assert.ok(out.includes(`found "${MARK}"`), out);
      assert.ok(!out.includes(VALUE.slice(0, 8)), out);
    }
  });
});

Deno.test("penguin trust lists a setting holding a vault value masked", async () => {
  await withRoot(async (root, ws) => {
    const sub = join(ws, "sub2");
    await Deno.mkdir(join(sub, VALUE), { recursive: true });
    await Deno.writeTextFile(
      join(sub, "penguin.jsonc"),
      `{\n "writable_roots": ["${VALUE}"],\n "mcp": {"deny": ["${VALUE}"]}\n}\n`,
    );
    const r = await runCliOk(["--root", root, "trust", sub]);
    assert.ok(r.stdout.includes(`"writable_roots": ["${MARK}"]`), r.stdout);
    assert.ok(!(r.stdout + r.stderr).includes(VALUE.slice(0, 8)), r.stdout);
  });
});

Deno.test({
  name: "the notes on an untrusted penguin.jsonc mask a vault value, another agent's too",
  ignore: !bwrap,
  fn: () =>
    withRoot(async (root, ws) => {
      await runCliOk([
        "--root",
        root,
        "config",
        "vault",
        "set",
        "--agent-id",
        "other_agent",
        "--key",
        "K",
        "--value",
        OTHER,
      ]);
      const sub = join(ws, "sub2");
      await Deno.mkdir(join(sub, VALUE), { recursive: true });
      await Deno.writeTextFile(
        join(sub, "penguin.jsonc"),
        `{\n "writable_roots": ["${VALUE}"],\n "mcp": {"deny": ["${VALUE}", "${OTHER}"]}\n}\n`,
      );
      const r = await runCli(["--root", root, "sandbox", "run", "--workspace", sub, "--", "true"]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /is ignored/);
      assert.ok(r.stderr.includes(MARK), r.stderr);
      assert.ok(r.stderr.includes("[redacted:vault:K]"), r.stderr);
      assert.ok(!r.stderr.includes(VALUE.slice(0, 8)), r.stderr);
      assert.ok(!r.stderr.includes(OTHER.slice(0, 8)), r.stderr);
    }),
});
