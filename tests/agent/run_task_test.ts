// runTask() through the SDK and `penguin run` through the CLI write the same trace for the same task.
import assert from "node:assert/strict";
import { join } from "node:path";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { turn } from "../support/model_server.ts";
import { penguinEnv, REPO, runCli, withoutTerminal } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { assertGoodTrace, type Sandbox } from "./_support.ts";

const MESSAGE = "Write notes.txt, then say done.";

/** The scripted task: one tool call that writes a file, then a text answer. */
const SCRIPT = {
  turns: [
    turn.toolCall("write_file", { file_path: "notes.txt", content: "one\ntwo\n" }),
    turn.text("Done."),
  ],
};

interface Ran {
  sessionId: string;
  records: OmniMessage[];
  sb: Sandbox;
}

/** The task through `runTask()`, in a program of its own (its own run directory, as every test's penguin). */
async function viaSdk(sb: Sandbox, runDir: string): Promise<string> {
  const { command, args } = withoutTerminal([
    Deno.execPath(),
    "run",
    "-A",
    "--config",
    `${REPO}deno.json`,
    `${REPO}tests/agent/_run_task_child.ts`,
    sb.root,
    sb.workspace,
    MESSAGE,
  ]);
  const out = await new Deno.Command(command, {
    args,
    cwd: sb.workspace,
    env: penguinEnv({ PENGUIN_RUN_DIR: runDir }),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  const outcome = JSON.parse(new TextDecoder().decode(out.stdout));
  assert.equal(outcome.completed, true, stderr);
  assert.deepEqual(outcome.outcome, { kind: "completed" });
  assert.equal(outcome.workspaceDir, sb.workspace);
  return outcome.sessionId;
}

/** The task through `penguin run`. */
async function viaCli(sb: Sandbox, runDir: string): Promise<string> {
  const r = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", MESSAGE], {
    env: { PENGUIN_RUN_DIR: runDir },
  });
  assert.equal(r.code, 0, r.stderr);
  const id = /^Session: (session-\S+)$/m.exec(r.stderr)?.[1];
  assert.ok(id, r.stderr);
  return id;
}

async function ranWith(how: (sb: Sandbox, runDir: string) => Promise<string>): Promise<Ran> {
  let ran: Ran | undefined;
  await withModelRoot(SCRIPT, async (sb) => {
    const sessionId = await how(sb, join(sb.base, "run"));
    assert.equal(await Deno.readTextFile(join(sb.workspace, "notes.txt")), "one\ntwo\n");
    ran = { sessionId, records: await assertGoodTrace(sb.root, sessionId), sb };
  });
  return ran!;
}

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A record with what differs between two runs of one task replaced: ids, times, paths, durations. */
function normalised(ran: Ran): unknown[] {
  const { sessionId, sb } = ran;
  const text = (s: string) =>
    s.replaceAll(sessionId, "<session>").replaceAll(sb.base, "<base>")
      .replace(/\bws-[0-9a-f]{8}\b/g, "ws-<hash>")
      .replace(/session-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}-[0-9a-f]{8}/g, "<session>");
  const walk = (v: unknown, key?: string): unknown => {
    if (typeof v === "string") return TIME.test(v) ? "<time>" : text(v);
    if (typeof v === "number" && key !== undefined && /(_ms|duration|elapsed|_at)$/.test(key)) {
      return "<number>";
    }
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v !== null && typeof v === "object") {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    }
    return v;
  };
  return ran.records.map((r) => walk(r));
}

Deno.test("a scripted task with a tool call writes the same trace through runTask() and penguin run", async () => {
  const sdk = await ranWith(viaSdk);
  const cli = await ranWith(viaCli);
  const a = normalised(sdk);
  const b = normalised(cli);
  assert.ok(
    a.some((r) => JSON.stringify(r).includes('"tool_call"')),
    "the trace has the tool call",
  );
  assert.equal(a.length, b.length, "as many records");
  for (let i = 0; i < a.length; i++) assert.deepEqual(a[i], b[i], `record ${i}`);
});
