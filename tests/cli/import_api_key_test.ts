// Attack round 19 imports B1: a trace holding the model's API key (from another machine, an older
// penguin, another harness) kept it through `sessions import`, and `trace show` / `trace export`
// printed it: the import and display masks knew the vault and MCP values, not the API keys a
// live session masks.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { addServerModel, withModelRoot } from "../support/roots.ts";
import { assertNoPieceOf, readAll } from "../support/secrets.ts";

const KEY = "Zq8Rk3Lm5Nw2Tp7Xc4Vb9Hd6Fg1Js0Ae";

Deno.test("sessions import, trace show and trace export mask the configured API key", async () => {
  const turns = [
    turn.of(item.toolCall("exec_command", { cmd: "echo PLACEHOLDER" })),
    turn.text("done PLACEHOLDER"),
  ];
  await withModelRoot({ turns }, async (sb, server) => {
    await addServerModel(sb.root, server, { api_key: KEY });
    const r = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"]);
    assert.equal(r.code, 0, r.stderr);
    const traces = join(sb.root, "default_project", "agents", "default_agent", "traces");
    const files: string[] = [];
    for await (const day of Deno.readDir(traces)) {
      for await (const f of Deno.readDir(join(traces, day.name))) {
        files.push(join(traces, day.name, f.name));
      }
    }
    const old = join(sb.base, "old-trace.jsonl");
    await Deno.writeTextFile(
      old,
      (await Deno.readTextFile(files[0]!)).replaceAll("PLACEHOLDER", KEY),
    );
    const imp = await runCli([
      "--root",
      sb.root,
      "sessions",
      "import",
      old,
      "--workspace",
      sb.workspace,
      "--again",
    ]);
    assert.equal(imp.code, 0, imp.stdout + imp.stderr);
    const sid = [...imp.stdout.matchAll(/session-[0-9-]+[0-9a-f]{8}/g)].at(-1)?.[0];
    assert.ok(sid, imp.stdout);
    assertNoPieceOf(await readAll(traces), [KEY], "a trace file after the import");
    const show = await runCli(["--root", sb.root, "trace", "show", "--verbose", sid]);
    assert.match(show.stdout, /\[redacted:api_key:custom\]/);
    assertNoPieceOf(show.stdout + show.stderr, [KEY], "trace show");
    const md = await runCli(["--root", sb.root, "trace", "export", sid, "--format", "md"]);
    assertNoPieceOf(md.stdout + md.stderr, [KEY], "trace export");
  });
});
