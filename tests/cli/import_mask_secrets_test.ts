// `sessions import` masks the secrets known at import time (issue 26 item 5, red team Y12): a trace
// written before a value was in the vault (or before call ids were masked) holds it. The import
// masks every string of every record — a tool-call id and its output's id alike, so they stay
// paired — says how many records it masked, and nothing of the value is left in the imported
// trace files, `trace show` or `trace export`; the import still validates. Penguin traces and a
// foreign (pi) session alike.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../lib/state/mod.ts";
import { item, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { assertNoPieceOf, readAll } from "../support/secrets.ts";

const V = "Qm7Zr2Kx9Wc4Lp8Tn3Hv6Bd1Fs5Gj0Ya";
const PI_FIXTURE = "/work/shared/fixtures/peer-sessions/pi/01-rich/sessions";
const CLAUDE_SUBAGENT =
  "/work/shared/fixtures/peer-sessions/claude/03-subagent/projects/-tmp-peer-GpixSI-work";
const CLAUDE_ID = "e2b9f5d7-f8ce-4956-bee6-7bf301a3f6f1";

async function firstJsonl(dir: string): Promise<string> {
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) {
      const found = await firstJsonl(p).catch(() => "");
      if (found) return found;
    } else if (e.isFile && p.endsWith(".jsonl")) return p;
  }
  throw new Error(`no .jsonl under ${dir}`);
}

/** Import `file` (after `config vault set` of V) and check every view of the imported session. */
async function importAndCheck(
  cli: (args: string[]) => Promise<{ stdout: string; stderr: string }>,
  root: string,
  workspace: string,
  file: string,
): Promise<void> {
  await cli(["config", "vault", "set", "--key", "OLD_V", "--value", V]);
  const imp = await cli(["sessions", "import", file, "--workspace", workspace, "--again"]);
  assert.match(imp.stderr, /masked secrets \(vault or MCP values\) in [1-9]\d* imported record/);
  const sid = [...imp.stdout.matchAll(/session-[0-9-]+[0-9a-f]{8}/g)].at(-1)?.[0];
  assert.ok(sid, imp.stdout + imp.stderr);
  const traces = join(root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID, "traces");
  const onDisk = await readAll(traces);
  assert.ok(onDisk.includes("[redacted:vault:OLD_V]"), "the imported trace holds the marker");
  assertNoPieceOf(onDisk, [V], "the trace files");
  const show = await cli(["trace", "show", "--verbose", sid]);
  assertNoPieceOf(show.stdout + show.stderr, [V], "trace show");
  for (const format of ["md", "json"]) {
    const exp = await cli(["trace", "export", sid, "--format", format, "--no-redact"]);
    assert.ok(exp.stdout.includes("[redacted:vault:OLD_V]"), `export ${format} shows the marker`);
    assertNoPieceOf(exp.stdout + exp.stderr, [V], `trace export --format ${format}`);
  }
  await cli(["trace", "validate", "--strict", traces]);
}

Deno.test("sessions import masks a vault value in a penguin trace's call id and text (Y12)", async () => {
  await withModelRoot({
    turns: [
      turn.of(item.toolCall("exec_command", { cmd: "echo hi" }, { id: "call_PLACEHOLDER" })),
      turn.text("first done PLACEHOLDER"),
    ],
  }, async (sb) => {
    const cli = async (args: string[]) => {
      const r = await runCli(["--root", sb.root, ...args], { env: { NO_COLOR: "1" } });
      assert.equal(r.code, 0, `penguin ${args.join(" ")}: ${r.stdout}${r.stderr}`);
      return r;
    };
    await cli(["run", "--workspace", sb.workspace, "--approve", "allow-all", "-m", "go"]);
    const traces = join(sb.root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID, "traces");
    const recorded = await Deno.readTextFile(await firstJsonl(traces));
    const old = join(sb.workspace, "..", "old-trace.jsonl");
    await Deno.writeTextFile(old, recorded.replaceAll("PLACEHOLDER", V));
    // The call id and its output's id both hold V: after masking they still pair.
    assert.ok((await Deno.readTextFile(old)).split(`call_${V}`).length - 1 >= 2);
    await importAndCheck(cli, sb.root, sb.workspace, old);
    // The call and its output still name one id, masked alike.
    const onDisk = await readAll(traces);
    assert.ok(onDisk.split("call_[redacted:vault:OLD_V]").length - 1 >= 2, onDisk);
  }, { visible: true });
});

Deno.test("sessions import masks a vault value in a line's first copy of a duplicated key (round 24 secrets B2)", async () => {
  await withModelRoot({ turns: [turn.text("done")] }, async (sb) => {
    const cli = async (args: string[]) => {
      const r = await runCli(["--root", sb.root, ...args], { env: { NO_COLOR: "1" } });
      assert.equal(r.code, 0, `penguin ${args.join(" ")}: ${r.stdout}${r.stderr}`);
      return r;
    };
    await cli(["run", "--workspace", sb.workspace, "-m", "go"]);
    const traces = join(sb.root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID, "traces");
    const recorded = await Deno.readTextFile(await firstJsonl(traces));
    // The parsed record holds the last copy of "text" ("done"): the first, with V, is in the bytes.
    const planted = recorded.replace(
      '"text":"done"',
      `"text":"the password is ${V}","text":"done"`,
    );
    assert.notEqual(planted, recorded);
    const old = join(sb.workspace, "..", "dup-key-trace.jsonl");
    await Deno.writeTextFile(old, planted);
    await cli(["config", "vault", "set", "--key", "OLD_V", "--value", V]);
    await cli(["sessions", "import", old, "--workspace", sb.workspace, "--again"]);
    assertNoPieceOf(await readAll(traces), [V], "the trace files");
    await cli(["trace", "validate", "--strict", traces]);
  }, { visible: true });
});

Deno.test("sessions import masks a vault value planted in a pi session's call id and text", async () => {
  await withModelRoot({ turns: [] }, async (sb) => {
    const cli = async (args: string[]) => {
      const r = await runCli(["--root", sb.root, ...args], { env: { NO_COLOR: "1" } });
      assert.equal(r.code, 0, `penguin ${args.join(" ")}: ${r.stdout}${r.stderr}`);
      return r;
    };
    const text = await Deno.readTextFile(await firstJsonl(PI_FIXTURE));
    const planted = text.replaceAll("call_mx4hwhwe006y", `call_${V}`)
      .replaceAll("buy milk", `buy milk ${V}`);
    assert.ok(planted.split(V).length - 1 >= 3, "V planted in a call, its result and a text");
    const file = join(sb.workspace, "..", "pi-session.jsonl");
    await Deno.writeTextFile(file, planted);
    await importAndCheck(cli, sb.root, sb.workspace, file);
  }, { visible: true });
});

Deno.test("sessions import masks a vault value planted in a Claude Code subagent's transcript", async () => {
  await withModelRoot({ turns: [] }, async (sb) => {
    const cli = async (args: string[]) => {
      const r = await runCli(["--root", sb.root, ...args], { env: { NO_COLOR: "1" } });
      assert.equal(r.code, 0, `penguin ${args.join(" ")}: ${r.stdout}${r.stderr}`);
      return r;
    };
    // The session and its subagent's transcript, the value planted in the child alone: its
    // records go to a spool of their own as they are converted, masked there.
    const dir = join(sb.workspace, "..", "claude-copy");
    await Deno.mkdir(join(dir, CLAUDE_ID, "subagents"), { recursive: true });
    await Deno.copyFile(
      join(CLAUDE_SUBAGENT, `${CLAUDE_ID}.jsonl`),
      join(dir, `${CLAUDE_ID}.jsonl`),
    );
    const subs = join(CLAUDE_SUBAGENT, CLAUDE_ID, "subagents");
    for await (const e of Deno.readDir(subs)) {
      const text = await Deno.readTextFile(join(subs, e.name));
      const planted = text.replaceAll("4 distinct items", `4 distinct items ${V}`);
      if (e.name.endsWith(".jsonl")) assert.ok(planted.includes(V), "V planted in the child");
      await Deno.writeTextFile(join(dir, CLAUDE_ID, "subagents", e.name), planted);
    }
    await importAndCheck(cli, sb.root, sb.workspace, join(dir, `${CLAUDE_ID}.jsonl`));
    const traces = join(sb.root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID, "traces");
    assert.match(await readAll(traces), /4 distinct items \[redacted:vault:OLD_V\]/);
  }, { visible: true });
});
