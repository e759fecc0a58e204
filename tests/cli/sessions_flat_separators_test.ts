// The session views flatten a text onto one line; a control character in it becomes a space, as
// the masker counts it a separator. Dropped, pieces of a vault value too short to mask each, joined
// by carriage returns, showed as the whole value in `sessions show` and `sessions list` (attack
// round 25 secrets B5).
import assert from "node:assert/strict";
import { startModelServer, turn } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";
import { runCli, runCliOk } from "../support/cli.ts";
import { flatLine } from "../../lib/session/render.ts";

const VALUE = "Cr7Zr2Kx9Wc4Lp8Tn3Hv6Bd1";
const pieces = (sep: string) =>
  [VALUE.slice(0, 6), VALUE.slice(6, 12), VALUE.slice(12, 18), VALUE.slice(18)].join(sep);

Deno.test("flatLine makes every control character a space, never joins what it separates", () => {
  assert.equal(flatLine("a\rb\x0bc\x0cd\x1be\x00f\x7fg\n\th", 80), "a b c d e f g h");
});

Deno.test("sessions show and list do not join a secret's pieces separated by carriage returns", async () => {
  const server = await startModelServer({
    turns: [turn.text(`answer ${pieces("\r")}`)],
  });
  const sb = await makeRoot(server, { visible: true });
  try {
    await runCliOk([
      "--root",
      sb.root,
      "config",
      "vault",
      "set",
      "--key",
      "DB_PW",
      "--value",
      VALUE,
    ]);
    await runCliOk([
      "--root",
      sb.root,
      "run",
      "--workspace",
      sb.workspace,
      "-m",
      `ask ${pieces("\r")}`,
    ]);
    const list = await runCliOk(["--root", sb.root, "sessions", "list", "--all"]);
    const id = list.stdout.match(/session-[0-9-]{19}-[0-9a-f]{8}/)?.[0];
    assert.ok(id, list.stdout);
    const show = await runCli(["--root", sb.root, "sessions", "show", id]);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, new RegExp(VALUE.slice(0, 6)), "the pieces are shown");
    const views: [string, string][] = [["sessions show", show.stdout], [
      "sessions list",
      list.stdout,
    ]];
    for (const [what, out] of views) {
      assert.equal(out.includes(VALUE.slice(0, 8)), false, `${what} joined the pieces:\n${out}`);
    }
  } finally {
    await server.close();
    await sb.cleanup();
  }
});
