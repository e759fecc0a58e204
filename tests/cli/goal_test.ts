// Goal mode end to end: `penguin run --goal` and chat's `/goal` as a
// subprocess against the scripted model server. The model changes the
// status in GOAL.yaml with write_file or a shell command; penguin reads it
// after every round.
import assert from "node:assert/strict";
import { join } from "node:path";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { item, type RecordedRequest, type ScriptedTurn, turn } from "../support/model_server.ts";
import { type CliResult, inRoot, readWatching, runCli, spawnCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { assertGoodTrace, readSession, type Sandbox } from "../agent/_support.ts";
import {
  childAnswerAfter,
  startChildInBackground,
  turnOf,
  whose,
} from "../agent/_subagent_support.ts";

/** What the model sees of one request: the last message's text, and the goal file it names. */
interface Seen {
  /** The text of the request's last user message ("" when the last one is a tool output). */
  lastUser: string;
  /** The goal file path from the last goal block in the request. */
  goalPath: string | undefined;
  /** The index of the request. */
  index: number;
  /** The goal round the last user message opens, if it opens one. */
  round: number | undefined;
}

function seenOf(req: RecordedRequest, index: number): Seen {
  const messages = (req.body as { messages: { role: string; content: unknown }[] }).messages;
  const last = messages[messages.length - 1]!;
  const textOf = (c: unknown) =>
    typeof c === "string"
      ? c
      : Array.isArray(c)
      ? c.map((p: { text?: string }) => p.text ?? "").join("")
      : "";
  let goalPath: string | undefined;
  for (const m of messages) {
    const hit = /^Goal file: (.+)$/m.exec(textOf(m.content));
    if (m.role === "user" && hit) goalPath = hit[1];
  }
  const lastUser = last.role === "user" ? textOf(last.content) : "";
  const round = /^\[goal\]\nround: (\d+)\n/.exec(lastUser)?.[1];
  return { lastUser, goalPath, index, round: round === undefined ? undefined : Number(round) };
}

type Script = (seen: Seen) => ScriptedTurn;

function goalScenario(
  script: Script,
  body: (ctx: {
    sb: Sandbox;
    requests: Seen[];
    run: (args: string[]) => Promise<CliResult>;
  }) => Promise<void>,
): Promise<void> {
  const requests: Seen[] = [];
  return withModelRoot({
    handler: (req, i) => {
      const seen = seenOf(req, i);
      requests.push(seen);
      return script(seen);
    },
    maxRequests: 40,
  }, (sb) =>
    body({
      sb,
      requests,
      run: (args) => runCli(inRoot(sb, "run", ...args)),
    }), { visible: true });
}

function sessionIdOf(r: CliResult): string {
  const id = /^Session: (session-\S+)$/m.exec(r.stderr)?.[1];
  assert.ok(id, `a session id in stderr:\n${r.stderr}`);
  return id;
}

function goalFinished(records: readonly OmniMessage[]): Record<string, unknown>[] {
  return records.filter((m) => m.type === "event_msg" && m.payload.type === "goal_finished")
    .map((m) => {
      const { type: _t, ...rest } = m.payload as Record<string, unknown>;
      return rest;
    });
}

function roundsSent(requests: readonly Seen[]): number[] {
  return requests.flatMap((s) => s.round === undefined ? [] : [s.round]);
}

/** The model's turn that writes `status` (complete by default) into the goal file `s` names. */
function setStatus(s: Seen, objective: string, status = "complete"): ScriptedTurn {
  return turn.of(item.toolCall("write_file", {
    file_path: s.goalPath!,
    content: `objective: ${objective}\nstatus: ${status}\n`,
  }));
}

function scratchpadOf(sb: Sandbox, sid: string): string {
  return join(sb.root, "default_project", "agents", "default_agent", "scratchpad", sid);
}

Deno.test("run --goal: round 1 answers, round 2 sets status complete with write_file → complete, exit 0, goal_finished in the trace", async () => {
  await goalScenario((s) => {
    if (s.round === 1) return turn.text("Started; more to do.");
    if (s.round === 2) return setStatus(s, "Create hello.txt");
    return turn.text("Done: the objective is met.");
  }, async ({ sb, requests, run }) => {
    const r = await run(["--goal", "-m", "Create hello.txt"]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const sid = sessionIdOf(r);
    assert.deepEqual(roundsSent(requests), [1, 2]);
    assert.equal(requests.length, 3);
    const first = requests[0]!.lastUser;
    const path = join(await Deno.realPath(scratchpadOf(sb, sid)), "GOAL.yaml");
    assert.ok(first.startsWith("[goal]\nround: 1\n"), first);
    assert.ok(first.includes(`Goal file: ${path}\n`), first);
    assert.ok(first.includes("```yaml\nobjective: Create hello.txt\nstatus: active\n```"), first);
    // Bounded by default: 500k tokens and 10 rounds, told to the model and on the goal's first line.
    assert.ok(first.includes("Budget: 0 / 500000 tokens used (remaining: 500000)."), first);
    assert.ok(first.includes("Round cap: 9 more round(s) in this run after this one."), first);
    assert.ok(!first.includes("still active"), first);
    assert.ok(first.endsWith("[/goal]\n\nCreate hello.txt"), first);
    assert.match(
      r.stdout,
      /^\[goal\] up to 10 rounds · budget 500k tokens · raise with --max-rounds \/ --budget\n\[goal\] round 1\n/,
    );
    // Round 2 carries the objective as its body and the tokens round 1 used (120: total minus cached).
    assert.ok(
      requests[1]!.lastUser.includes("Budget: 120 / 500000 tokens used (remaining: 499880)."),
      requests[1]!.lastUser,
    );
    // Round 1 ended with a final answer and the status still active: round 2's block says so.
    assert.ok(
      requests[1]!.lastUser.includes(
        "Note: the previous round ended with a final answer, but the goal file's status is still active.",
      ),
      requests[1]!.lastUser,
    );
    assert.ok(requests[1]!.lastUser.endsWith("[/goal]\n\nCreate hello.txt"));
    assert.equal(
      await Deno.readTextFile(path),
      "objective: Create hello.txt\nstatus: complete\n",
    );
    assert.match(r.stdout, /\[goal\] round 1\n/);
    assert.match(r.stdout, /\[goal\] round 2\n/);
    assert.match(r.stdout, /\[goal\] completed · 2 rounds · tokens 360/);
    const records = await readSession(sb.root, sid);
    assert.deepEqual(goalFinished(records), [{ outcome: "complete", rounds: 2, tokens_used: 360 }]);
    assert.equal(records[records.length - 1]!.type, "event_msg", "goal_finished ends the trace");
    // Listed by its objective, not by the goal block.
    const list = await runCli(["--root", sb.root, "sessions", "list"]);
    assert.match(list.stdout, new RegExp(`${sid}.*Create hello\.txt`));
    assert.ok(!list.stdout.includes("[goal]"), list.stdout);
  });
});

Deno.test("run --goal: a shell command sets the status (the session scratchpad is writable in the sandbox, the rest of the data root stays hidden)", async () => {
  await goalScenario((s) => {
    if (s.round === 1) return turn.text("Looked around.");
    if (s.round === 2) {
      const agentDir = join(s.goalPath!, "..", "..", "..");
      const cmd = `sed -i 's/^status: active$/status: complete/' ${s.goalPath}; ` +
        `ls ${join(agentDir, "scratchpad")}; ls ${join(agentDir, "traces")} 2>&1 | wc -l; ` +
        `cat ${join(agentDir, "..", "..", ".project_config.toml")} 2>&1 | head -c 200`;
      return turn.of(item.toolCall("exec_command", { cmd }));
    }
    return turn.text("Done.");
  }, async ({ sb, requests, run }) => {
    // Another session's scratchpad: the model must not see it.
    const other = join(sb.root, "default_project", "agents", "default_agent", "scratchpad", "o");
    await Deno.mkdir(other, { recursive: true });
    await Deno.writeTextFile(join(other, "secret.txt"), "other session");
    const r = await run(["--goal", "-m", "Check the workspace"]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const sid = sessionIdOf(r);
    assert.equal(
      await Deno.readTextFile(join(scratchpadOf(sb, sid), "GOAL.yaml")),
      "objective: Check the workspace\nstatus: complete\n",
    );
    const output = JSON.stringify(requests[2]);
    assert.ok(output.includes(sid), "its own scratchpad is there");
    assert.ok(!/\bo\\n/.test(output) && !output.includes("other session"), output);
    assert.ok(!output.includes("[[models]]") && !output.includes("base_url"), output);
    assert.deepEqual(goalFinished(await readSession(sb.root, sid)), [
      { outcome: "complete", rounds: 2, tokens_used: 360 },
    ]);
  });
});

Deno.test("run --goal --budget: the budget spent → one wrap-up round, then budget_limited, exit 1", async () => {
  await goalScenario(() => turn.text("Still working."), async ({ sb, requests, run }) => {
    const r = await run(["--goal", "--budget", "0.2k", "-m", "An endless task"]);
    assert.equal(r.code, 1, r.stderr + r.stdout);
    // 120 tokens per round: round 1 (120 < 200), round 2 (240 ≥ 200), then the wrap-up round 3.
    assert.deepEqual(roundsSent(requests), [1, 2, 3]);
    assert.ok(requests[0]!.lastUser.includes("Budget: 0 / 200 tokens used (remaining: 200)."));
    assert.ok(requests[1]!.lastUser.includes("Budget: 120 / 200 tokens used (remaining: 80)."));
    const wrap = requests[2]!.lastUser;
    assert.ok(wrap.includes("wrap-up: the token budget of this goal is spent"), wrap);
    assert.ok(wrap.includes("Budget: 240 / 200 tokens used (remaining: 0)."), wrap);
    assert.match(r.stdout, /\[goal\] stopped: token budget exhausted · 3 rounds · tokens 360/);
    assert.deepEqual(goalFinished(await readSession(sb.root, sessionIdOf(r))), [
      { outcome: "budget_limited", rounds: 3, tokens_used: 360 },
    ]);
  });
});

Deno.test("run --goal --budget: a wrap-up round that sets complete ends complete", async () => {
  await goalScenario((s) => {
    if (s.lastUser.includes("wrap-up:")) return setStatus(s, "x");
    return turn.text("ok");
  }, async ({ sb, run }) => {
    // PenguinHarness's form: the budget as --goal's value.
    const r = await run(["--goal", "100", "-m", "x"]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    // Round 1 (120) spends the budget; the wrap-up round makes two requests (240).
    assert.deepEqual(goalFinished(await readSession(sb.root, sessionIdOf(r))), [
      { outcome: "complete", rounds: 2, tokens_used: 360 },
    ]);
  });
});

Deno.test("run --goal --max-rounds: the cap ends the goal aborted, exit 1, and the last line names the cap", async () => {
  await goalScenario(() => turn.text("Not yet."), async ({ sb, requests, run }) => {
    const r = await run(["--goal", "--max-rounds", "2", "-m", "Keep going"]);
    assert.equal(r.code, 1, r.stderr + r.stdout);
    assert.deepEqual(roundsSent(requests), [1, 2]);
    assert.match(r.stdout, /^\[goal\] up to 2 rounds · budget 500k tokens/);
    assert.match(r.stdout, /\[goal\] stopped: round cap of 2 reached · 2 rounds · tokens 240\n/);
    assert.deepEqual(goalFinished(await readSession(sb.root, sessionIdOf(r))), [
      { outcome: "aborted", rounds: 2, tokens_used: 240, reason: "round_cap", max_rounds: 2 },
    ]);
  });
});

Deno.test("run --goal: a model that answers without ever setting the status stops at the default cap of 10 rounds", async () => {
  await goalScenario(() => turn.text("Done!"), async ({ sb, requests, run }) => {
    const r = await run(["--goal", "-m", "Keep going"]);
    assert.equal(r.code, 1, r.stderr + r.stdout);
    assert.deepEqual(roundsSent(requests), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert.ok(
      requests[9]!.lastUser.includes("Round cap: 0 more round(s) in this run after this one."),
    );
    // Every round after the first is told the status did not change.
    for (const s of requests.slice(1)) {
      assert.ok(s.lastUser.includes("is still active"), s.lastUser);
    }
    const lines = r.stdout.trimEnd().split("\n");
    assert.match(
      lines.findLast((l) => l.startsWith("[goal]"))!,
      /^\[goal\] stopped: round cap of 10 reached · 10 rounds/,
    );
    assert.deepEqual(goalFinished(await readSession(sb.root, sessionIdOf(r))), [
      { outcome: "aborted", rounds: 10, tokens_used: 1200, reason: "round_cap", max_rounds: 10 },
    ]);
  });
});

Deno.test("run --goal --budget none: unbounded, said on the first line and to the model", async () => {
  await goalScenario((s) => setStatus(s, "Finish"), async ({ requests, run }) => {
    const r = await run(["--goal", "--budget", "none", "--max-rounds", "3", "-m", "Finish"]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /^\[goal\] up to 3 rounds · no token budget · /);
    assert.ok(requests[0]!.lastUser.includes("Budget: none (unbounded). Tokens used so far: 0."));
    assert.ok(
      requests[0]!.lastUser.includes("Round cap: 2 more round(s) in this run after this one."),
    );
  });
});

Deno.test("run --goal: status blocked ends the goal blocked, exit 1; a status the model mangles counts as blocked", async () => {
  await goalScenario((s) => {
    if (s.lastUser.startsWith("[goal]")) {
      const status = s.lastUser.includes("objective: A") ? "blocked" : "maybe";
      return setStatus(s, "x", status);
    }
    return turn.text("I need the API key.");
  }, async ({ sb, run }) => {
    const a = await run(["--goal", "-m", "A"]);
    assert.equal(a.code, 1, a.stderr + a.stdout);
    assert.match(a.stdout, /\[goal\] blocked \(see the final reply for what it needs\) · 1 round/);
    assert.deepEqual(goalFinished(await readSession(sb.root, sessionIdOf(a))), [
      { outcome: "blocked", rounds: 1, tokens_used: 240 },
    ]);
    const b = await run(["--goal", "-m", "B"]);
    assert.equal(b.code, 1);
    assert.deepEqual(goalFinished(await readSession(sb.root, sessionIdOf(b))), [
      { outcome: "blocked", rounds: 1, tokens_used: 240 },
    ]);
  });
});

Deno.test("run --goal: usage errors exit 2 before any request", async () => {
  await goalScenario(() => turn.text("x"), async ({ requests, run }) => {
    const cases: [string[], RegExp][] = [
      [["--budget", "10k", "-m", "x"], /run: --budget needs --goal/],
      [["--max-rounds", "3", "-m", "x"], /run: --max-rounds needs --goal/],
      [["--goal", "--budget", "lots", "-m", "x"], /run: --budget must be a number of tokens/],
      [["--goal", "--budget", "0", "-m", "x"], /run: --budget must be a number of tokens/],
      [["--goal", "--max-rounds", "0", "-m", "x"], /run: --max-rounds must be a positive integer/],
      [["--goal"], /run: --goal needs -m <objective>/],
      [["--goal", "1k", "--budget", "2k", "-m", "x"], /run: give the budget once/],
      [["--goal", "Create a file", "-m", "x"], /run: --goal must be a number of tokens/],
      [["--goal", "-m", "  "], /run: the objective is empty/],
      [["--goal", "-m", "[use_skills]\nskills: a\n[/use_skills]\n\n "], /the objective is empty/],
      [["--goal", "--sandbox", "read-only", "-m", "x"], /run: --goal needs a writable sandbox/],
    ];
    for (const [args, want] of cases) {
      const r = await run(args);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, want);
    }
    assert.equal(requests.length, 0);
  });
});

Deno.test("run --resume --goal continues the session's goal: rounds and tokens go on from the trace", async () => {
  await goalScenario((s) => {
    if (s.round === 2) return setStatus(s, "Long job");
    return turn.text(s.round === 1 ? "Part one done." : "All done.");
  }, async ({ sb, requests, run }) => {
    const first = await run(["--goal", "--max-rounds", "1", "-m", "Long job"]);
    assert.equal(first.code, 1, first.stderr);
    const sid = sessionIdOf(first);
    const again = await run(["--resume", sid, "--goal"]);
    assert.equal(again.code, 0, again.stderr + again.stdout);
    assert.deepEqual(roundsSent(requests), [1, 2]);
    const round2 = requests[1]!.lastUser;
    assert.ok(round2.includes("Budget: 120 / 500000 tokens used"), round2);
    assert.match(
      again.stdout,
      /^\[goal\] up to 10 rounds · budget 500k tokens \(120 used so far\)/,
    );
    assert.ok(round2.endsWith("[/goal]\n\nLong job"), round2);
    assert.deepEqual(goalFinished(await readSession(sb.root, sid)), [
      { outcome: "aborted", rounds: 1, tokens_used: 120, reason: "round_cap", max_rounds: 1 },
      { outcome: "complete", rounds: 2, tokens_used: 360 },
    ]);
    // A complete goal cannot be continued; a new objective starts a new goal.
    const done = await run(["--resume", sid, "--goal"]);
    assert.equal(done.code, 2);
    assert.match(done.stderr, /already complete; start a new one with an objective/);
  });
});

Deno.test("chat /goal runs a goal in the chat's session; /goal:<budget> sets a budget", async () => {
  await goalScenario((s) => {
    if (s.lastUser.includes("objective: Ship it")) return setStatus(s, "Ship it");
    return turn.text(s.lastUser.startsWith("[goal]") ? "working" : "Shipped.");
  }, async ({ sb, requests }) => {
    const r = await runCli(inRoot(sb, "chat"), {
      stdin: "/goal Ship it\n/goal:0.1k Polish\n/goal:lots x\n",
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\[goal\] up to 10 rounds · budget 500k tokens · \/goal:<budget>/);
    assert.match(r.stdout, /\[goal\] up to 10 rounds · budget 100 tokens · /);
    assert.match(r.stdout, /\[goal\] round 1\n/);
    assert.match(r.stdout, /\[goal\] completed · 1 round · tokens 240/);
    assert.match(r.stdout, /\[goal\] stopped: token budget exhausted · 2 rounds · tokens 240/);
    assert.match(r.stdout, /\[error\] Usage: \/goal\[:<budget>\] <objective>/);
    const sid = /^Session: (session-\S+)$/m.exec(r.stdout)![1]!;
    assert.ok(
      requests.some((s) => s.lastUser.includes("Budget: 0 / 100 tokens used (remaining: 100).")),
    );
    assert.deepEqual(goalFinished(await readSession(sb.root, sid)), [
      { outcome: "complete", rounds: 1, tokens_used: 240 },
      { outcome: "budget_limited", rounds: 2, tokens_used: 240 },
    ]);
  });
});

Deno.test("run --goal --json: SIGINT in round 2 ends the goal aborted (exit 1), recorded in the trace", async () => {
  await goalScenario((s) => {
    if (s.round === 1) return turn.text("one");
    return { ...turn.text("A round that never quite finishes"), chunk: 4, stall_after: 2 };
  }, async ({ sb }) => {
    const child = spawnCli(inRoot(sb, "run", "--json", "--goal", "-m", "Work"));
    const stderr = new Response(child.stderr).text();
    const messages: OmniMessage[] = [];
    let inRound2 = false;
    let sent = false;
    let buf = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buf += chunk;
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const m = JSON.parse(buf.slice(0, nl)) as OmniMessage;
        buf = buf.slice(nl + 1);
        messages.push(m);
        if (m.type === "model_msg" && m.payload.type === "text" && m.payload.role === "user") {
          inRound2 = m.payload.text.startsWith("[goal]\nround: 2\n");
        }
        if (inRound2 && !sent && m.payload.type === "partial_text") {
          sent = true;
          child.kill("SIGINT");
        }
      }
    }
    const status = await child.status;
    assert.equal(status.code, 1, await stderr);
    // The stream carries the round inputs and ends with goal_finished.
    const rounds = messages.filter((m) =>
      m.type === "model_msg" && m.payload.type === "text" && m.payload.role === "user"
    ).length;
    assert.equal(rounds, 2);
    const last = messages[messages.length - 1]!;
    assert.deepEqual(last.payload, {
      type: "goal_finished",
      outcome: "aborted",
      rounds: 2,
      tokens_used: 120,
      reason: "interrupted",
    });
    const sid = (messages[0]!.payload as { session_id: string }).session_id;
    const records = await assertGoodTrace(sb.root, sid);
    assert.deepEqual(goalFinished(records), [
      { outcome: "aborted", rounds: 2, tokens_used: 120, reason: "interrupted" },
    ]);
  });
});

Deno.test("chat --resume then /goal continues the session's goal from the trace; /goal without a goal says so", async () => {
  await goalScenario((s) => {
    if (s.round === 2) return setStatus(s, "Long job");
    return turn.text("ok");
  }, async ({ sb, requests, run }) => {
    const first = await run(["--goal", "--max-rounds", "1", "-m", "Long job"]);
    assert.equal(first.code, 1, first.stderr);
    const sid = sessionIdOf(first);
    const r = await runCli(["--root", sb.root, "chat", "--resume", sid], { stdin: "/goal\n" });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\[goal\] completed · 2 rounds · tokens 360/);
    assert.deepEqual(roundsSent(requests), [1, 2]);
    const fresh = await runCli(inRoot(sb, "chat"), {
      stdin: "/goal\n",
    });
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.match(fresh.stdout, /\[error\] Session session-\S+ has no goal to continue/);
  });
});

Deno.test("run --goal: a round that hits --max-turns ends the goal aborted, exit 1", async () => {
  await goalScenario(
    () => turn.of(item.toolCall("exec_command", { cmd: "true" })),
    async ({ sb, requests, run }) => {
      const r = await run(["--goal", "--max-turns", "1", "-m", "Loop"]);
      assert.equal(r.code, 1, r.stderr + r.stdout);
      assert.equal(requests.length, 1);
      assert.match(r.stdout, /\[goal\] aborted: a round hit max turns · 1 round/);
      assert.deepEqual(goalFinished(await readSession(sb.root, sessionIdOf(r))), [
        { outcome: "aborted", rounds: 1, tokens_used: 120, reason: "max_turns" },
      ]);
    },
  );
});

/**
 * The background tests: the parent's first turn starts `[[child]]` in the
 * background; once the child's report came in (its third turn) it sets the
 * goal complete. The child answers only once the test calls `sawWaiting`
 * (it saw penguin wait for it). `parent` collects what the parent's
 * requests carried.
 */
function delegationScenario(
  body: (ctx: { sb: Sandbox; parent: Seen[]; sawWaiting: () => void }) => Promise<void>,
): Promise<void> {
  const { promise: released, resolve: sawWaiting } = Promise.withResolvers<void>();
  const parent: Seen[] = [];
  const handler = async (req: RecordedRequest, i: number): Promise<ScriptedTurn> => {
    if (whose(req) === "child") return await childAnswerAfter(released);
    const seen = seenOf(req, i);
    parent.push(seen);
    const t = turnOf(req);
    if (t === 0) return startChildInBackground();
    if (t === 1) return turn.text("Started the child; waiting for its report.");
    if (t === 2 && seen.lastUser.includes("[background_task_done]")) {
      return setStatus(seen, "'[[parent]] delegate'");
    }
    return turn.text("Done: the child reported 42.");
  };
  return withModelRoot(
    { handler, maxRequests: 20 },
    (sb) => body({ sb, parent, sawWaiting }),
    { visible: true },
  );
}

const WAITING = "[background] waiting for";

Deno.test("run --goal waits for a background subagent and lets the model read its report before the round is judged", async () => {
  await delegationScenario(async ({ sb, parent, sawWaiting }) => {
    const child = spawnCli(inRoot(sb, "run", "--goal", "-m", "[[parent]] delegate"));
    const stdout = new Response(child.stdout).text();
    const stderr = await readWatching(child.stderr, WAITING, sawWaiting);
    const r = { code: (await child.status).code, stdout: await stdout, stderr };
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stderr, /\[background\] waiting for 1 background subagent\(s\) to finish/);
    // One round: the report came in that round, not as the next round's news.
    assert.deepEqual(roundsSent(parent), [1]);
    assert.equal(parent.length, 4);
    assert.match(parent[2]!.lastUser, /\[background_task_done\][\s\S]*child result: 42/);
    const sid = sessionIdOf(r);
    const records = await readSession(sb.root, sid);
    const [finished] = goalFinished(records);
    assert.equal(finished?.outcome, "complete");
    assert.equal(finished?.rounds, 1);
    // The child's request counts: four parent requests and one child request.
    assert.equal(finished?.tokens_used, 5 * 120);
    await assertGoodTrace(sb.root, sid);
  });
});

Deno.test("run --resume --goal after a killed goal run counts the subagents' tokens from their own traces", async () => {
  const { promise: round2, resolve: reachedRound2 } = Promise.withResolvers<void>();
  const { promise: killed, resolve: wasKilled } = Promise.withResolvers<void>();
  const parent: Seen[] = [];
  await withModelRoot({
    handler: async (req, i) => {
      if (whose(req) === "child") return turn.text("child result: 42");
      const seen = seenOf(req, i);
      parent.push(seen);
      // The resumed round's message also carries the torn round 2: the highest round is this one.
      const rounds = [...seen.lastUser.matchAll(/\[goal\]\nround: (\d+)\n/g)].map((m) => +m[1]!);
      const round = rounds.length > 0 ? Math.max(...rounds) : undefined;
      if (round === 1) {
        return turn.toolCall("run_subagent", {
          description: "part one",
          prompt: "[[child]] compute the answer",
        });
      }
      if (round === 2) {
        // The goal run dies here, without a goal_finished.
        reachedRound2();
        await killed;
        return turn.text("never read");
      }
      if (round === 3) return setStatus(seen, "'[[parent]] long job'");
      return turn.text(seen.lastUser === "" && turnOf(req) > 2 ? "All done." : "Part one done.");
    },
    maxRequests: 20,
  }, async (sb) => {
    const proc = spawnCli(inRoot(sb, "run", "--goal", "-m", "[[parent]] long job"));
    const stderr = new Response(proc.stderr).text();
    const stdout = new Response(proc.stdout).text();
    await round2;
    proc.kill("SIGKILL");
    await proc.status;
    wasKilled();
    const sid = /^Session: (session-\S+)$/m.exec(await stderr)?.[1];
    assert.ok(sid, await stdout);
    assert.deepEqual(goalFinished(await readSession(sb.root, sid)), []);
    const again = await runCli([
      "--root",
      sb.root,
      "run",
      "--resume",
      sid,
      "--goal",
    ]);
    assert.equal(again.code, 0, again.stderr + again.stdout);
    const sent = parent.find((s) => s.lastUser.includes("[goal]\nround: 3\n"))!.lastUser;
    const round3 = sent.slice(sent.indexOf("[goal]\nround: 3\n"));
    // Round 1: the parent's two requests and the child's one, 120 each.
    assert.ok(round3.includes("Budget: 360 / 500000 tokens used"), round3);
  }, { visible: true });
});

Deno.test("chat /goal waits for a background subagent before judging the round, as run --goal does", async () => {
  await delegationScenario(async ({ sb, parent, sawWaiting }) => {
    const proc = spawnCli(inRoot(sb, "chat"), "/goal [[parent]] delegate\n");
    const stderr = new Response(proc.stderr).text();
    const stdout = await readWatching(proc.stdout, WAITING, sawWaiting);
    const code = (await proc.status).code;
    assert.equal(code, 0, (await stderr) + stdout);
    assert.match(stdout, /\[background\] waiting for 1 background subagent\(s\) to finish/);
    assert.deepEqual(roundsSent(parent), [1]);
    assert.match(stdout, /\[goal\] completed · 1 round/);
    const sid = /^Session: (session-\S+)$/m.exec(stdout)![1]!;
    const [finished] = goalFinished(await readSession(sb.root, sid));
    assert.deepEqual([finished?.outcome, finished?.rounds], ["complete", 1]);
  });
});

Deno.test("run --resume --goal masks vault values the model wrote into GOAL.yaml's objective", async () => {
  const SECRET = "sk-goal-secret-5521";
  await goalScenario((s) => {
    const round = /^\[goal\]\nround: (\d+)\n/.exec(s.lastUser)?.[1];
    if (round === "1") {
      // The model copies a vault value (its commands see it) into the objective.
      return turn.of(item.toolCall("exec_command", {
        cmd: `printf 'objective: leak %s\\nstatus: active\\n' "$GOAL_TOKEN" > '${s.goalPath}'`,
      }));
    }
    return turn.text("ok");
  }, async ({ sb, requests, run }) => {
    const state = join(sb.root, "default_project", "agents", "default_agent", "agent_state");
    await Deno.mkdir(state, { recursive: true });
    await Deno.writeTextFile(join(state, ".vault.toml"), `GOAL_TOKEN = "${SECRET}"\n`, {
      mode: 0o600,
    });
    const first = await run(["--goal", "--max-rounds", "1", "-m", "Harmless job"]);
    assert.equal(first.code, 1, first.stderr);
    const sid = sessionIdOf(first);
    const file = await Deno.readTextFile(join(scratchpadOf(sb, sid), "GOAL.yaml"));
    assert.ok(file.includes(SECRET), "the model did write the value");
    const again = await run(["--resume", sid, "--goal", "--max-rounds", "2"]);
    assert.equal(again.code, 1, again.stderr);
    const resumed = requests.at(-1)!.lastUser;
    assert.match(resumed, /^\[goal\]\nround: \d+\n/);
    assert.match(resumed, /leak \[redacted:vault:GOAL_TOKEN\]$/);
    for (const r of requests) assert.ok(!r.lastUser.includes(SECRET), r.lastUser);
    const trace = JSON.stringify(await readSession(sb.root, sid));
    assert.ok(!trace.includes(SECRET), "the trace never holds the value");
  });
});
