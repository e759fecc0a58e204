// A session whose id holds a value set as a secret after it was imported: the views print the id
// and the trace files' paths (named after it) masked as they mask the records. `sessions show`,
// `trace show` and `trace export` printed the whole value where `sessions list` masked it (attack
// round 25 secrets B3).
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer, turn } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";
import { runCli, runCliOk } from "../support/cli.ts";
import { filesUnder } from "../support/files_under.ts";

const V = "Qv7Zr2Kx9Wc4Lp8Tn3Hv6Bd1";

Deno.test("views mask a session id and its files' paths that hold a secret set since", async () => {
  const server = await startModelServer({ turns: [turn.text("done")] });
  const sb = await makeRoot(server, { visible: true });
  try {
    await runCliOk(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"]);
    const [trace] = (await filesUnder(sb.root)).filter((p) => p.endsWith(".jsonl"));
    assert.ok(trace);
    const lines = (await Deno.readTextFile(trace)).split("\n").filter((l) => l.startsWith("{"));
    const meta = JSON.parse(lines[0]!);
    meta.payload.session_id = `sess-${V}`;
    const src = join(sb.base, `sess-${V}.jsonl`);
    await Deno.writeTextFile(src, [JSON.stringify(meta), ...lines.slice(1)].join("\n") + "\n");
    await runCliOk(["--root", sb.root, "sessions", "import", src, "--workspace", sb.workspace]);
    await runCliOk(["--root", sb.root, "config", "vault", "set", "--key", "DB_PW", "--value", V]);
    for (
      const args of [
        ["sessions", "show", "sess-Qv"],
        ["trace", "show", "sess-Qv"],
        ["trace", "export", "sess-Qv", "--format", "md"],
        ["trace", "export", "sess-Qv", "--format", "json"],
      ]
    ) {
      const r = await runCli(["--root", sb.root, ...args]);
      assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
      const out = r.stdout + r.stderr;
      assert.equal(out.includes(V.slice(0, 8)), false, `${args.join(" ")}:\n${out.slice(0, 1500)}`);
      assert.match(out, /\[redacted:vault:DB_PW\]/, args.join(" "));
    }
  } finally {
    await server.close();
    await sb.cleanup();
  }
});
