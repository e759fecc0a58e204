// `penguin sessions import` of Codex, Claude Code and pi sessions as a
// subprocess: every peer fixture imports (detected, and with --from),
// validates, shows, and resumes against the scripted model server with its
// whole recorded conversation in the request; --json; malformed lines are
// refused (nothing written) unless --lenient.
import assert from "node:assert/strict";
import { join } from "node:path";
import type { OmniMessage, SessionMeta } from "../../lib/protocol/types.ts";
import { readTraceFile } from "../../lib/trace/reader.ts";
import { validateTraceFiles } from "../../lib/trace/validate.ts";
import { runCli } from "../support/cli.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { withModelRoot, withRoot } from "../support/roots.ts";
import { tracesDir } from "../agent/_support.ts";
import {
  assertContext,
  atomsOfContext,
  completes,
  requestAtoms,
} from "../agent/_resume_support.ts";
import { filesUnder } from "../support/files_under.ts";
import { importArgs } from "./_import_args.ts";

const PEERS = "/work/shared/fixtures/peer-sessions";

interface Scenario {
  harness: "codex" | "claude" | "pi";
  scenario: string;
  files: Array<{ path: string; role: string; toolCallsPerPrompt?: string[][] }>;
}
const MANIFEST: Scenario[] = JSON.parse(await Deno.readTextFile(join(PEERS, "manifest.json")));
const sessionFile = (sc: Scenario) => join(PEERS, sc.files.find((f) => f.role === "session")!.path);

interface ForeignJson {
  session_id: string;
  original_id: string;
  harness: string;
  path: string;
  tool_calls: number;
  loss: Array<{ kind: string; count: number; example: string; reason: string }>;
  children: Array<{ session_id: string; path: string; tool_calls: number }>;
}

Deno.test("sessions import --json: every peer fixture imports (format detected), validates and shows", async () => {
  await withRoot(async (root) => {
    const files = MANIFEST.map(sessionFile);
    const r = await runCli(importArgs(root, "--json", ...files));
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { ok: boolean; foreign: ForeignJson[]; refused: unknown[] };
    assert.equal(out.ok, true);
    assert.deepEqual(out.refused, []);
    assert.equal(out.foreign.length, MANIFEST.length);
    for (const [i, sc] of MANIFEST.entries()) {
      const f = out.foreign[i]!;
      assert.equal(f.harness, sc.harness);
      const main = sc.files.find((x) => x.role === "session")!;
      assert.equal(f.tool_calls, main.toolCallsPerPrompt!.flat().length);
      assert.ok(f.loss.length > 0, "every import has a loss report");
      const meta = (await readTraceFile(f.path)).messages[0]!.payload as SessionMeta;
      assert.deepEqual(
        Object.keys(meta.imported_from as object).sort(),
        ["cwd", "file", "harness", "id", "version", "workspace_from"],
      );
      assert.equal((meta.imported_from as { workspace_from: string }).workspace_from, "cwd");
      assert.equal((meta.imported_from as { id: string }).id, f.original_id);
      assert.equal((meta.imported_from as { file: string }).file, sessionFile(sc));
      const show = await runCli(["--root", root, "sessions", "show", f.session_id]);
      assert.equal(show.code, 0, show.stderr);
    }
    // The Claude subagent came along as a child session with a pointer.
    const sub = out.foreign.find((f) => f.children.length > 0)!;
    const child = (await readTraceFile(sub.children[0]!.path)).messages[0]!.payload as SessionMeta;
    assert.equal(child.source, "subagent");
    assert.equal((child.parent as { session_id: string }).session_id, sub.session_id);
    const parent = (await readTraceFile(sub.path)).messages;
    assert.ok(
      parent.some((m) =>
        m.type === "event_msg" && m.payload.type === "subagent" &&
        m.payload.session_id === sub.children[0]!.session_id
      ),
    );
    const tree = await runCli(["--root", root, "sessions", "tree", sub.session_id]);
    assert.equal(tree.code, 0, tree.stderr);
    assert.match(tree.stdout, new RegExp(sub.children[0]!.session_id));
    const v = await validateTraceFiles([tracesDir(root)]);
    assert.deepEqual(v.problems, []);
    assert.equal(v.files.length, MANIFEST.length + 1);
  });
});

Deno.test("sessions import --verbose prints the loss report; --from names the harness; a penguin trace still imports as before", async () => {
  await withRoot(async (root) => {
    const codex = sessionFile(MANIFEST.find((m) => m.harness === "codex")!);
    const r = await runCli(importArgs(root, "--from", "codex", "--verbose", codex));
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^Imported Codex session \S+ as session-\S+: \d+ record\(s\), 9 tool call\(s\)$/m,
    );
    assert.match(r.stdout, /^ {2}Loss report \(not imported\):$/m);
    assert.match(r.stdout, /^ {4}turn_context ×1 \(e\.g\. \S+\.jsonl:\d+\): /m);
    assert.match(r.stdout, /^1 session\(s\) imported, 0 refused$/m);
    // The wrong --from: refused with the parser's file:line errors, nothing written.
    const wrong = await runCli(importArgs(root, "--from", "pi", codex));
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /\.jsonl:1: expected a pi session header first/);
    const bad = await runCli(importArgs(root, "--from", "gemini", codex));
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--from: expected codex, claude or pi/);
    // A penguin trace (no --from) keeps today's path.
    const penguin = "/work/shared/fixtures/penguin-traces/01-simple.jsonl";
    const p = await runCli(importArgs(root, penguin));
    assert.equal(p.code, 0, p.stderr);
    assert.match(p.stdout, /^Imported session-\S+: 1 file\(s\)$/m);
    assert.equal((await filesUnder(tracesDir(root))).length, 2);
  });
});

Deno.test("sessions import: a Claude subagent transcript given with its parent comes in once, as the child; alone, as a session", async () => {
  await withRoot(async (root) => {
    const sc = MANIFEST.find((m) => m.harness === "claude" && m.scenario === "03-subagent")!;
    const sub = join(PEERS, sc.files.find((f) => f.role === "subagent-transcript")!.path);
    const r = await runCli(importArgs(root, "--json", sessionFile(sc), sub));
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { foreign: ForeignJson[]; foreign_with_parent: string[] };
    assert.equal(out.foreign.length, 1);
    assert.equal(out.foreign[0]!.children.length, 1);
    assert.deepEqual(out.foreign_with_parent, [sub]);
    const alone = await runCli(importArgs(root, "--json", sub));
    assert.equal(alone.code, 0, alone.stderr);
    const a = (JSON.parse(alone.stdout) as { foreign: ForeignJson[] }).foreign[0]!;
    assert.equal(a.tool_calls, 3);
    assert.equal(a.original_id, "a5fe30c81479f9c5c");
    assert.equal((await filesUnder(tracesDir(root))).length, 3);
  });
});

Deno.test("sessions import: a malformed line is refused with file:line (nothing written); --lenient skips it", async () => {
  await withRoot(async (root) => {
    const dir = await Deno.makeTempDir({ dir: root, prefix: "copy-" });
    const claude = MANIFEST.find((m) => m.harness === "claude" && m.scenario === "02-resume")!;
    const lines = (await Deno.readTextFile(sessionFile(claude))).split("\n");
    lines.splice(6, 0, '{"type": "user", "message": ');
    const copy = join(dir, "corrupted.jsonl");
    await Deno.writeTextFile(copy, lines.join("\n"));
    const r = await runCli(importArgs(root, copy));
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`${copy.replaceAll(".", "\\.")}:7: not valid JSON`));
    assert.deepEqual(await filesUnder(tracesDir(root)), []);
    const l = await runCli(importArgs(root, "--lenient", "--json", copy));
    assert.equal(l.code, 0, l.stderr);
    const out = JSON.parse(l.stdout) as { foreign: Array<ForeignJson & { skipped: string[] }> };
    assert.equal(out.foreign[0]!.skipped.length, 1);
    assert.match(out.foreign[0]!.skipped[0]!, /corrupted\.jsonl:7: not valid JSON/);
    assert.equal(out.foreign[0]!.tool_calls, 5);
    const files = await filesUnder(tracesDir(root));
    assert.equal(files.length, 1);
    assert.deepEqual((await validateTraceFiles(files)).problems, []);
  });
});

for (const sc of MANIFEST) {
  Deno.test(`peer fixture ${sc.harness}/${sc.scenario}: imported, resumed on an explicit pair, the model gets the whole recorded conversation`, async () => {
    const server = await startModelServer({ turns: [turn.text("Resumed fine.")] });
    await withModelRoot(server, async (sb) => {
      const cli = (args: string[]) => runCli(["--root", sb.root, ...args], { cwd: sb.workspace });
      const imp = await cli(["sessions", "import", "--json", sessionFile(sc)]);
      assert.equal(imp.code, 0, imp.stderr);
      const f = (JSON.parse(imp.stdout) as { foreign: ForeignJson[] }).foreign[0]!;
      const recorded: OmniMessage[] = (await readTraceFile(f.path)).messages;
      const meta = recorded[0]!.payload as SessionMeta;
      // The recorded pair is the foreign one, not configured here; an explicit pair is used as given
      // (without one, the default model: tests/cli/import_resume_model_test.ts).
      const r = await cli([
        "run",
        "--resume",
        f.session_id,
        "--provider",
        "custom",
        "--model-id",
        "m",
        "-m",
        "continue",
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(server.requests.length, 1);
      const sent = requestAtoms(server, 0);
      const history = atomsOfContext(completes(recorded));
      // The recorded conversation, then the new prompt, in the workspace chosen at import (the
      // current directory): penguin's own system prompt (the recorded one is empty) names it.
      assert.equal(sent[0]!.role, "system");
      assert.ok(sent[0]!.text!.includes(sb.workspace), "the system prompt names the workspace");
      const afterSystem = sent.slice(1);
      assertContext(afterSystem.slice(0, -1), history);
      const last = afterSystem.at(-1)!;
      assert.equal(last.role, "user");
      assert.equal(last.text, "continue");
      // Every recorded tool call went in with its name, arguments and id, answered by its output.
      const calls = sent.flatMap((a) => a.calls ?? []);
      assert.equal(calls.length, f.tool_calls);
      assert.equal(sent.filter((a) => a.role === "tool").length, f.tool_calls);
      assert.equal(meta.workspace, sb.workspace);
      assert.notEqual((meta.imported_from as { cwd: string }).cwd, sb.workspace);
      // The resumed run's tool_list_ready names the pair it switched to.
      const after = (await readTraceFile(f.path)).messages.slice(recorded.length);
      const ready = after.find((m) =>
        m.type === "event_msg" && m.payload.type === "tool_list_ready"
      );
      assert.deepEqual((ready?.payload as { model?: unknown }).model, {
        provider: "custom",
        model_id: "m",
      });
      const v = await validateTraceFiles([tracesDir(sb.root)]);
      assert.deepEqual(v.problems, []);
    });
  });
}
