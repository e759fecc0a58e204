// Ids and times an import copies from the files it reads, and what it prints while it runs,
// hold no secret known at import time (attack round 23 secrets): a Claude Code Agent call's id
// in the child's session_meta (B1), a penguin trace's parent ids (B2) and a pointer to a child not
// imported with it (B3), `sessions delete` naming that missing child (B5), the progress line
// naming a file (B6), a digits-only value in a timestamp's fraction (B7), and an import into
// another agent than the one whose vault holds the value (B9).
import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../lib/state/mod.ts";
import { turn } from "../support/model_server.ts";
import { penguinArgv, penguinEnv, REPO, runCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { assertNoPieceOf, readAll } from "../support/secrets.ts";
import { hasScript, shellQuote } from "../support/pty_script.ts";

const V = "Qm7Zr2Kx9Wc4Lp8Tn3Hv6Bd1";
const PIN = "4718293056172839";
const SID = "e2b9f5d7-f8ce-4956-bee6-7bf301a3f6f1";
const tracesOf = (root: string, agent = DEFAULT_AGENT_ID) =>
  join(root, DEFAULT_PROJECT_ID, "agents", agent, "traces");

type Cli = (
  args: string[],
  env?: Record<string, string>,
) => Promise<{ stdout: string; stderr: string }>;

function cliOf(root: string): Cli {
  return async (args, env = {}) => {
    const r = await runCli(["--root", root, ...args], { env: { NO_COLOR: "1", ...env } });
    assert.equal(r.code, 0, `penguin ${args.join(" ")}: ${r.stdout}${r.stderr}`);
    return r;
  };
}

/** A recorded penguin trace of one turn, as its lines (the recorded files removed). */
async function recordedLines(cli: Cli, ws: string, root: string): Promise<string[]> {
  await cli(["run", "--workspace", ws, "-m", "go"]);
  const text = await readAll(tracesOf(root));
  await Deno.remove(tracesOf(root), { recursive: true });
  return text.split("\n").filter((l) => l.startsWith("{"));
}

Deno.test("a Claude Code import keeps no secret of an Agent call id or a timestamp (B1, B7)", async () => {
  await withModelRoot({ turns: [] }, async (sb) => {
    const cli = cliOf(sb.root);
    await cli(["config", "vault", "set", "--key", "DB_PW", "--value", V]);
    await cli(["config", "vault", "set", "--key", "PIN", "--value", PIN]);
    const dir = join(sb.workspace, "..", "claude-src");
    await Deno.mkdir(join(dir, SID, "subagents"), { recursive: true });
    const call = `toolu_${V}`;
    const c = { sessionId: SID, cwd: "/tmp/w", isSidechain: false };
    const ts = "2026-12-01T09:29:10.000Z";
    const lines = [
      // The file's first time (the session_meta's) spells the digits in its fraction.
      {
        ...c,
        type: "queue-operation",
        operation: "enqueue",
        timestamp: `2026-12-01T09:29:09.${PIN}Z`,
      },
      {
        ...c,
        parentUuid: null,
        type: "user",
        uuid: "u1",
        timestamp: ts,
        message: { role: "user", content: "go" },
      },
      {
        ...c,
        parentUuid: "u1",
        type: "assistant",
        uuid: "a1",
        timestamp: `2026-12-01T09:29:11.${PIN}Z`,
        message: {
          id: "m1",
          role: "assistant",
          content: [{ type: "tool_use", id: call, name: "Agent", input: { prompt: "inspect" } }],
        },
      },
      {
        ...c,
        parentUuid: "a1",
        type: "user",
        uuid: "u2",
        timestamp: ts,
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: call, content: "ok" }],
        },
      },
    ];
    await Deno.writeTextFile(
      join(dir, `${SID}.jsonl`),
      lines.map((l) => JSON.stringify(l) + "\n").join(""),
    );
    const child = [
      {
        ...c,
        isSidechain: true,
        parentUuid: null,
        type: "user",
        uuid: "c1",
        timestamp: ts,
        message: { role: "user", content: "inspect" },
      },
      {
        ...c,
        isSidechain: true,
        parentUuid: "c1",
        type: "assistant",
        uuid: "c2",
        timestamp: ts,
        message: { id: "m2", role: "assistant", content: [{ type: "text", text: "ok" }] },
      },
    ];
    await Deno.writeTextFile(
      join(dir, SID, "subagents", "agent-a1.jsonl"),
      child.map((l) => JSON.stringify(l) + "\n").join(""),
    );
    await Deno.writeTextFile(
      join(dir, SID, "subagents", "agent-a1.meta.json"),
      JSON.stringify({ agentType: "general-purpose", toolUseId: call }),
    );
    const imp = await cli([
      "sessions",
      "import",
      join(dir, `${SID}.jsonl`),
      "--workspace",
      sb.workspace,
    ]);
    assert.match(imp.stdout, /and 1 subagent session\(s\)/);
    const onDisk = await readAll(tracesOf(sb.root));
    assertNoPieceOf(onDisk, [V, PIN], "the imported traces");
    // The child's parent pointer still pairs with the parent's (masked) call.
    const metas = onDisk.split("\n").filter((l) => l.includes('"session_meta"')).map((l) =>
      JSON.parse(l)
    );
    const childMeta = metas.find((m) => m.payload.parent !== undefined)!;
    assert.equal(childMeta.payload.parent.tool_call_id, "toolu_[redacted:vault:DB_PW]");
    assert.ok(onDisk.includes('"tool_call_id":"toolu_[redacted:vault:DB_PW]"'));
    await cli(["trace", "validate", "--strict", tracesOf(sb.root)]);
  }, { visible: true });
});

Deno.test("a penguin trace import keeps no secret of its parent ids, its own id or a pointer's (B2, B3, B5)", async () => {
  await withModelRoot({ turns: [turn.text("done")] }, async (sb) => {
    const cli = cliOf(sb.root);
    const lines = await recordedLines(cli, sb.workspace, sb.root);
    const meta = JSON.parse(lines[0]!);
    meta.payload.session_id = `sess-${V}`;
    meta.payload.source = "subagent";
    meta.payload.parent = {
      session_id: `session-2026-01-01-00-00-00-${V}`,
      tool_call_id: `call_${V}`,
    };
    const last = JSON.parse(lines.at(-1)!);
    const pointer = {
      timestamp: last.timestamp,
      type: "event_msg",
      payload: { type: "subagent", session_id: `kid-${V}` },
    };
    const old = join(sb.workspace, "..", "old-trace.jsonl");
    await Deno.writeTextFile(
      old,
      [JSON.stringify(meta), ...lines.slice(1), JSON.stringify(pointer)].join("\n") + "\n",
    );
    await cli(["config", "vault", "set", "--key", "DB_PW", "--value", V]);
    const imp = await cli(["sessions", "import", old, "--workspace", sb.workspace, "--lenient"]);
    assertNoPieceOf(imp.stdout + imp.stderr, [V], "the import's report");
    const onDisk = await readAll(tracesOf(sb.root));
    assertNoPieceOf(onDisk, [V], "the imported trace");
    for await (const d of Deno.readDir(tracesOf(sb.root))) {
      for await (const f of Deno.readDir(join(tracesOf(sb.root), d.name))) {
        assertNoPieceOf(f.name, [V], "the imported file's name");
      }
    }
    const sid = /(session-[0-9-]{19}-[0-9a-f]{8})/.exec(imp.stdout)![1]!;
    const validate = await runCli(["--root", sb.root, "trace", "validate", tracesOf(sb.root)]);
    assertNoPieceOf(validate.stdout + validate.stderr, [V], "trace validate");
    const del = await cli(["sessions", "delete", sid, "--yes"]);
    assert.match(del.stderr, /Child session\(s\) not found: kid-\[redacted:vault:DB_PW\]/);
    assertNoPieceOf(del.stdout + del.stderr, [V], "sessions delete");
  }, { visible: true });
});

Deno.test("an import into another agent masks the project's other agents' vault values (B9)", async () => {
  await withModelRoot({ turns: [] }, async (sb) => {
    const cli = cliOf(sb.root);
    await cli(["config", "vault", "set", "--key", "DB_PW", "--value", V]);
    const file = join(sb.workspace, "..", `${SID}.jsonl`);
    const c = {
      sessionId: SID,
      cwd: "/tmp/w",
      isSidechain: false,
      timestamp: "2026-12-01T09:29:11.000Z",
    };
    await Deno.writeTextFile(
      file,
      [
        {
          ...c,
          parentUuid: null,
          type: "user",
          uuid: "u1",
          message: { role: "user", content: `the password is ${V}` },
        },
        {
          ...c,
          parentUuid: "u1",
          type: "assistant",
          uuid: "a1",
          message: { id: "m1", role: "assistant", content: [{ type: "text", text: "ok" }] },
        },
      ].map((l) => JSON.stringify(l) + "\n").join(""),
    );
    await cli(["sessions", "import", file, "--workspace", sb.workspace, "--agent-id", "other"]);
    const onDisk = await readAll(tracesOf(sb.root, "other"));
    assert.ok(onDisk.includes("the password is [redacted:vault:DB_PW]"), onDisk);
    assertNoPieceOf(onDisk, [V], "agent other's imported trace");
  }, { visible: true });
});

Deno.test({
  name: "the import's progress line on a terminal names no file by a secret (B6)",
  ignore: !hasScript,
  async fn() {
    await withModelRoot({ turns: [] }, async (sb) => {
      const cli = cliOf(sb.root);
      await cli(["config", "vault", "set", "--key", "DB_PW", "--value", V]);
      const src = join(sb.workspace, "..", "named");
      await Deno.mkdir(src);
      const line = {
        parentUuid: null,
        isSidechain: false,
        type: "user",
        uuid: "u1",
        timestamp: "2026-12-01T09:29:10.000Z",
        cwd: "/tmp/w",
        message: { role: "user", content: "hi" },
      };
      const files: string[] = [];
      for (let i = 0; i < 3; i++) {
        const f = join(src, `${i}-${V}.jsonl`);
        await Deno.writeTextFile(
          f,
          JSON.stringify({ ...line, sessionId: `${SID.slice(0, -1)}${i}` }) + "\n",
        );
        files.push(f);
      }
      const argv = [
        Deno.execPath(),
        ...penguinArgv(),
        "--root",
        sb.root,
        "sessions",
        "import",
        "--from",
        "claude",
        "--workspace",
        sb.workspace,
        ...files,
      ];
      const out = await new Deno.Command("/usr/bin/script", {
        args: ["-q", "-e", "-c", argv.map(shellQuote).join(" "), "/dev/null"],
        env: penguinEnv(),
        cwd: REPO,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 0, text);
      assert.match(text, /importing 1\/3 0-\[redacted:vault:DB_PW\]\.jsonl/);
      assertNoPieceOf(text, [V], "the terminal");
    }, { visible: true });
  },
});
