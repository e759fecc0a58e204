// `chat --resume` draws the recorded history masked with today's secrets, as the context sent to the
// model is: a value set in the vault after the session ran was drawn in clear, while `trace show`
// masked it (attack round 25 secrets B7).
import assert from "node:assert/strict";
import { startModelServer, turn } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";
import { runCli, runCliOk } from "../support/cli.ts";

const LATE = "Ch7Zr2Kx9Wc4Lp8Tn3Hv6Bd1";

Deno.test("chat --resume masks the history it draws with the secrets set since", async () => {
  const server = await startModelServer({
    handler: (_req, i) => turn.text(i === 0 ? `late: ${LATE}` : "ok"),
  });
  const sb = await makeRoot(server, { visible: true });
  try {
    await runCliOk(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "first"]);
    await runCliOk(["--root", sb.root, "config", "vault", "set", "--key", "LATE", "--value", LATE]);
    const list = await runCliOk(["--root", sb.root, "sessions", "list", "--all"]);
    const id = list.stdout.match(/session-[0-9-]{19}-[0-9a-f]{8}/)?.[0];
    assert.ok(id, list.stdout);
    const r = await runCli(
      ["--root", sb.root, "chat", "--workspace", sb.workspace, "--resume", id],
      { stdin: "/exit\n" },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /late: \[redacted:vault:LATE\]/, r.stdout);
    assert.equal((r.stdout + r.stderr).includes(LATE.slice(0, 8)), false, r.stdout);
  } finally {
    await server.close();
    await sb.cleanup();
  }
});
