import assert from "node:assert/strict";
import { join } from "node:path";
import {
  approverForMode,
  createAgent,
  decide,
  parseApprovalMode,
  type RunOptions,
  verdictOf,
  withCommandPolicy,
} from "../../lib/agent/mod.ts";
import { toolCall } from "../../lib/protocol/builders.ts";
import { effectivePolicy } from "../../lib/tools/command_policy.ts";
import { item, type ScriptedTurn, turn } from "../support/model_server.ts";
import { assertGoodTrace, collect, ofKind, waitFor } from "./_support.ts";
import { withModelRoot } from "../support/roots.ts";

const call = (name: string, args: Record<string, unknown>) =>
  toolCall(name, JSON.stringify(args), `id-${name}`);

Deno.test("approval modes parse case-insensitively and reject anything else", () => {
  assert.equal(parseApprovalMode("Read-Only"), "read-only");
  assert.equal(parseApprovalMode("ALLOW-ALL"), "allow-all");
  assert.throws(
    () => parseApprovalMode("sometimes"),
    /--approve must be one of allow-all, deny-all, read-only, always-ask/,
  );
});

Deno.test("read-only allows r tools, asks about the rest, and denies when nobody can be asked", async () => {
  const permissionOf = (n: string) => (n === "read_file" ? "r" as const : "rw" as const);
  const asked: string[] = [];
  const withAsk = approverForMode("read-only", {
    permissionOf,
    ask: (c) => (asked.push(c.name), true),
  });
  const v = async (a: ReturnType<typeof approverForMode>, c: ReturnType<typeof call>) =>
    verdictOf(await a(c));
  assert.deepEqual(await v(withAsk, call("read_file", { file_path: "a" })), { decision: "allow" });
  assert.deepEqual(await v(withAsk, call("write_file", { file_path: "a", content: "" })), {
    decision: "allow",
  });
  assert.deepEqual(asked, ["write_file"]);
  const noAsk = approverForMode("read-only", { permissionOf });
  assert.deepEqual(await v(noAsk, call("write_file", { file_path: "a", content: "" })), {
    decision: "deny",
    reason: "approval mode read-only runs only read tools when there is no one to ask",
  });
  assert.deepEqual(await v(approverForMode("always-ask"), call("read_file", {})), {
    decision: "deny",
    reason: "approval mode always-ask, and there is no one to ask",
  });
  assert.deepEqual(await v(approverForMode("deny-all"), call("read_file", {})), {
    decision: "deny",
    reason: "approval mode deny-all",
  });
});

Deno.test("a denial says why: the user's no, the asker's own reason, or the callback's", async () => {
  const said = (answer: boolean | "deny" | { decision: "deny"; reason: string }) =>
    approverForMode("always-ask", { ask: () => answer })(call("write_file", {}));
  assert.deepEqual(verdictOf(await said(false)), {
    decision: "deny",
    reason: "the user answered no",
  });
  assert.deepEqual(verdictOf(await said("deny")), {
    decision: "deny",
    reason: "the user answered no",
  });
  assert.deepEqual(verdictOf(await said({ decision: "deny", reason: "pressed Ctrl-C" })), {
    decision: "deny",
    reason: "pressed Ctrl-C",
  });
  assert.deepEqual(verdictOf("deny"), {
    decision: "deny",
    reason: "the approval callback denied it",
  });
  assert.deepEqual(verdictOf("forbidden"), { decision: "forbidden", reason: "the command policy" });
  assert.equal(verdictOf("maybe"), null);
  assert.equal(verdictOf({ decision: "perhaps" }), null);
});

Deno.test("the command policy forbids destructive commands without asking, and exempts a lone Ctrl-C", async () => {
  let asked = 0;
  const approve = withCommandPolicy(() => (asked++, "allow"), effectivePolicy());
  for (
    const cmd of [
      "rm -rf /",
      "sudo /bin/rm -fr x",
      '"rm" -rf x',
      "sh -c 'rm -rf /'",
      "dd if=/dev/zero of=/dev/sda",
      ":(){ :|:& };:",
    ]
  ) {
    assert.equal(
      verdictOf(await approve(call("exec_command", { cmd })))?.decision,
      "forbidden",
      cmd,
    );
  }
  assert.deepEqual(verdictOf(await approve(call("exec_command", { cmd: "rm -rf /" }))), {
    decision: "forbidden",
    reason: 'policy rule "rm-recursive-force"',
  });
  assert.equal(asked, 0);
  assert.equal(await approve(call("input_command", { process_id: "p", chars: "\u0003" })), "allow");
  assert.equal(await approve(call("exec_command", { cmd: "ls -la" })), "allow");
  const off = withCommandPolicy(() => "allow", effectivePolicy({ enabled: false }));
  assert.equal(await off(call("exec_command", { cmd: "rm -rf /" })), "allow");
});

Deno.test("a throwing or nonsensical approve callback counts as deny, and says so", async () => {
  const notes: string[] = [];
  const c = call("read_file", {});
  assert.deepEqual(
    await decide(
      () => {
        throw new Error("boom");
      },
      c,
      (l) => notes.push(l),
    ),
    { decision: "deny", reason: "the approval callback failed" },
  );
  assert.deepEqual(
    await decide(() => Promise.reject(new Error("late boom")), c, (l) => notes.push(l)),
    { decision: "deny", reason: "the approval callback failed" },
  );
  assert.deepEqual(await decide((() => "maybe") as never, c, (l) => notes.push(l)), {
    decision: "deny",
    reason: "the approval callback gave no decision",
  });
  assert.equal(notes.length, 3);
  assert.match(notes[0]!, /approve callback threw: boom; denying/);
});

async function runWith(
  turns: ScriptedTurn[],
  opts: RunOptions,
  check: (
    ctx: {
      ws: string;
      stream: Awaited<ReturnType<typeof collect>>;
      records: Record<string, unknown>[][];
    },
  ) => void | Promise<void>,
): Promise<void> {
  await withModelRoot({ turns }, async (sb) => {
    const agent = await createAgent({ root: sb.root });
    const session = await agent.createSession({ workspaceDir: sb.workspace, warn: () => {} });
    (opts as { onWorkspace?: (ws: string) => void }).onWorkspace?.(sb.workspace);
    const stream = await collect(session.run("Do it.", opts));
    await session.dispose();
    const records = await assertGoodTrace(sb.root, session.sessionId);
    await check({
      ws: sb.workspace,
      stream,
      records: [ofKind(records, "approval_decision"), ofKind(records, "tool_call_output")],
    });
  });
}

const writeTurns = () => [
  turn.of(
    item.toolCall("write_file", { file_path: "w.txt", content: "x" }, { id: "w" }),
    item.toolCall("read_file", { file_path: "r.txt" }, { id: "r" }),
  ),
  turn.text("ok"),
];

Deno.test("without an approve callback every call is denied with an aborted output that says why", async () => {
  await runWith(writeTurns(), {}, ({ ws, records: [decisions, outputs] }) => {
    assert.deepEqual(decisions!.map((d) => [d.decision, d.reason]), [
      ["deny", "no approval callback was given"],
      ["deny", "no approval callback was given"],
    ]);
    for (const o of outputs!) {
      assert.equal(o.output, "Tool call denied by user. Reason: no approval callback was given.");
      assert.equal(o.stop_reason, "aborted");
    }
    assert.throws(() => Deno.statSync(join(ws, "w.txt")), Deno.errors.NotFound);
  });
});

Deno.test("a throwing callback denies; read-only allows read_file and denies write_file when nobody answers", async () => {
  await runWith(writeTurns(), {
    approve: () => {
      throw new Error("nope");
    },
  }, ({ records: [d] }) => {
    assert.deepEqual(d!.map((x) => x.decision), ["deny", "deny"]);
  });
  await runWith(writeTurns(), { approve: "read-only" }, ({ ws, records: [d, outputs] }) => {
    assert.deepEqual(d!.map((x) => [x.tool_call_id, x.decision]), [["w", "deny"], ["r", "allow"]]);
    assert.match(String(outputs!.find((o) => o.tool_call_id === "r")!.output), /File not found/);
    assert.throws(() => Deno.statSync(join(ws, "w.txt")), Deno.errors.NotFound);
  });
});

Deno.test("rm -rf / under allow-all is forbidden by policy and never runs", async () => {
  await runWith(
    [
      turn.toolCall("exec_command", { cmd: "rm -rf / ; touch ran.txt", description: "wipe" }),
      turn.text("ok"),
    ],
    { approve: "allow-all" },
    ({ ws, stream, records: [d, outputs] }) => {
      assert.deepEqual(d!.map((x) => [x.decision, x.reason]), [
        ["forbidden", 'policy rule "rm-recursive-force"'],
      ]);
      assert.equal(
        outputs![0]!.output,
        'Tool call denied by policy. Reason: policy rule "rm-recursive-force".',
      );
      assert.equal(outputs![0]!.stop_reason, "aborted");
      assert.ok(
        !stream.some((m) => m.payload.type === "partial_tool_call_output"),
        "nothing executed",
      );
      assert.throws(() => Deno.statSync(join(ws, "ran.txt")), Deno.errors.NotFound);
    },
  );
});

Deno.test("an approval decision is recorded right after its call even when another tool finishes meanwhile", async () => {
  const seen: string[] = [];
  let workspace = "";
  await runWith([
    turn.of(
      item.toolCall("exec_command", { cmd: "echo one; touch done.txt", description: "quick" }, {
        id: "e",
      }),
      item.toolCall("read_file", { file_path: "r.txt" }, { id: "r" }),
    ),
    turn.text("ok"),
  ], {
    approve: "always-ask",
    ask: async (c) => {
      seen.push(c.tool_call_id);
      if (c.tool_call_id === "r") {
        // Hold this approval until the first command's output is in the trace.
        await waitFor(() => existsSync(join(workspace, "done.txt")), "the first command");
        await waitFor(
          () =>
            traceHas(
              join(workspace, "..", "data"),
              /"tool_call_id":"e"[^\n]*"stop_reason"|"type":"tool_call_output"[^\n]*"tool_call_id":"e"/,
            ),
          "the first command's output in the trace",
        );
      }
      return true;
    },
    onWorkspace: (ws: string) => (workspace = ws),
  } as RunOptions, ({ records: [d, outputs] }) => {
    assert.deepEqual(seen, ["e", "r"]);
    assert.deepEqual(d!.map((x) => x.decision), ["allow", "allow"]);
    assert.equal(outputs![0]!.tool_call_id, "e", "the first command's output is recorded first");
  });
});

/** True when a trace file under `root` has a line matching `pattern`. */
function traceHas(root: string, pattern: RegExp): boolean {
  const walk = (dir: string): boolean => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch {
      return false;
    }
    return entries.some((e) =>
      e.isDirectory
        ? walk(join(dir, e.name))
        : e.name.endsWith(".jsonl") && pattern.test(Deno.readTextFileSync(join(dir, e.name)))
    );
  };
  return walk(root);
}

function existsSync(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
