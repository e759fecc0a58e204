import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { resolveDataRoot } from "../../lib/state/root.ts";

const envOf = (vars: Record<string, string>) => (name: string) => vars[name];

Deno.test("data root: --root wins over PENGUIN_HOME and HOME", () => {
  const env = envOf({ PENGUIN_HOME: "/ph", HOME: "/home/u" });
  assert.equal(resolveDataRoot({ root: "/flag", env }), "/flag");
  assert.equal(resolveDataRoot({ root: "rel/dir", env }), resolve("rel/dir"));
});

Deno.test("data root: PENGUIN_HOME wins over HOME; empty values count as unset", () => {
  assert.equal(resolveDataRoot({ env: envOf({ PENGUIN_HOME: "/ph", HOME: "/home/u" }) }), "/ph");
  assert.equal(
    resolveDataRoot({ root: "", env: envOf({ PENGUIN_HOME: "", HOME: "/home/u" }) }),
    join("/home/u", ".penguin", "data"),
  );
});

Deno.test("data root: without HOME or PENGUIN_HOME is a config error that says what to set", () => {
  assert.throws(() => resolveDataRoot({ env: envOf({}) }), (err: unknown) => {
    assert.ok(err instanceof PenguinError);
    assert.equal(err.kind, "config");
    assert.match(err.message, /PENGUIN_HOME/);
    assert.match(err.message, /HOME is not set/);
    return true;
  });
});
