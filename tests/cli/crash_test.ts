// Crash and resume: a `penguin run` doing a scripted multi-turn task (tool
// calls that write files, then text) is killed with SIGKILL at a random
// point, 50 times with different seeds. After each kill the trace may only
// have a torn last line (a dangling request or an unanswered call is a
// warning), resume must succeed, and the resumed session's first request, as
// the scripted server receives it, must carry exactly the committed history
// (placeholders for outputs that never reached the trace) and the new prompt.
import assert from "node:assert/strict";
import { join } from "node:path";
import { INTERRUPTED_OUTPUT } from "../../lib/session/mod.ts";
import { listSessionFiles } from "../../lib/trace/paths.ts";
import { readTraceFile } from "../../lib/trace/reader.ts";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { runCli } from "../support/cli.ts";
import type { ModelServer, ScriptedTurn } from "../support/model_server.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { makeRoot, tracesDir } from "../agent/_support.ts";
import { assertContext, type Atom, requestAtoms, userAtom } from "../agent/_resume_support.ts";
import { prng } from "../support/prng.ts";
import { spawnSilentCli } from "../support/cli_silent.ts";

const ITERATIONS = 50;
const BATCH = 5;
const PROMPT = "Write the four files.";

const write = (n: number) =>
  item.toolCall("write_file", { file_path: `f${n}.txt`, content: `file ${n}\n` }, { id: `w_${n}` });

/** The pre-crash task: four requests; `delay` = ms before each response starts. */
function script(delays: number[]): ScriptedTurn[] {
  return [
    { items: [item.text("Writing f0."), write(0)], delay_ms: delays[0] },
    { items: [write(1), write(2)], delay_ms: delays[1], chunk: 4 },
    { items: [write(3), item.text("One more to go.")], delay_ms: delays[2] },
    { ...turn.text("All four files are written."), delay_ms: delays[3] },
  ];
}

/** The assistant atom of scripted turn `t`, as a later request carries it. */
function answerAtom(t: ScriptedTurn): Atom {
  const text = t.items.flatMap((i) => (i.kind === "text" ? [i.text] : [])).join("");
  const calls = t.items.flatMap((i) =>
    i.kind === "tool_call" ? [`${i.name}(${JSON.stringify(i.arguments)})#${i.id}`] : []
  );
  return { role: "assistant", text, calls };
}

function callIds(t: ScriptedTurn): string[] {
  return t.items.flatMap((i) => (i.kind === "tool_call" ? [i.id!] : []));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Outcome {
  seed: number;
  killedAfter: number;
  committed: number;
}

async function crashAndResume(seed: number): Promise<Outcome | null> {
  const rand = prng(seed);
  const delays = [0, 1, 2, 3].map(() => Math.floor(rand() * 25));
  const turns = script(delays);
  let resumed = false;
  const server: ModelServer = await startModelServer({
    handler: (_req, i) => (resumed ? turn.text("Resumed.") : turns[i]),
  });
  const sb = await makeRoot(server);
  try {
    const child = spawnSilentCli(["--root", sb.root, "run", "-m", PROMPT], sb.workspace);
    const status = child.status;
    let exited = false;
    status.then(() => (exited = true));
    // Kill after a random number of received requests plus a short random delay,
    // or after a random delay from the start.
    // Wait on the server, not on the clock: a loaded machine may take many seconds to start
    // penguin, and a kill before its first request would test nothing. The deadline is only a
    // failsafe against a hung child.
    const failsafe = Date.now() + 300_000;
    const requests = async (n: number) => {
      while (server.requests.length < n && !exited && Date.now() < failsafe) await sleep(2);
    };
    if (rand() < 0.7) {
      await requests(1 + Math.floor(rand() * 4));
      await sleep(Math.floor(rand() * 40));
    } else {
      await requests(1);
      await sleep(Math.floor(rand() * 1000));
    }
    try {
      child.kill("SIGKILL");
    } catch {
      // it already finished the task
    }
    await status;
    const received = server.requests.length;

    const sessions = await sessionsIn(tracesDir(sb.root));
    if (sessions.length === 0) return null; // killed before anything was recorded
    assert.equal(sessions.length, 1);
    const sid = sessions[0]!;
    const path = (await listSessionFiles(tracesDir(sb.root), sid))[0]!.path;
    if ((await readTraceFile(path)).messages[0]?.type !== "session_meta") {
      // Killed before its first record was complete (an empty file or a torn
      // session_meta): there is no session to resume, and resume says so.
      const r = await runCli(["--root", sb.root, "run", "--resume", sid, "-m", "continue"]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /does not start with a readable session_meta/);
      return null;
    }

    // Before resume: at most a torn last line; a dangling request or call is a warning.
    const validated = await runCli(["trace", "validate", "--json", path]);
    const report = JSON.parse(validated.stdout) as {
      files: { problems: { kind: string; line: number }[] }[];
    };
    const problems = report.files[0]!.problems;
    assert.ok(
      problems.every((p) => p.kind === "torn_tail"),
      `seed ${seed}: only a torn last line may be wrong:\n${validated.stdout}`,
    );
    const torn = problems.map((p) => p.line);
    const before = (await readTraceFile(path)).messages;

    resumed = true;
    const r = await runCli(["--root", sb.root, "run", "--resume", sid, "-m", "continue"], {
      cwd: sb.workspace,
    });
    assert.equal(r.code, 0, `seed ${seed}: resume failed:\n${r.stderr}`);
    assert.equal(server.requests.length, received + 1, `seed ${seed}: one resumed request`);

    const committed = before.filter((m) =>
      m.type === "event_msg" && m.payload.type === "request_end" &&
      m.payload.status === "completed"
    ).length;
    const got = requestAtoms(server, received);
    assertContext(got, expectedContext(server, turns, before, committed), `seed ${seed}`);
    assert.equal(
      got.filter((a) =>
        a.role === "assistant"
      ).length,
      committed,
      `seed ${seed}: every committed round is in the resumed context`,
    );

    // After resume: the resumed writer cut the torn line off, so nothing is left to report.
    const after = await runCli(["trace", "validate", "--json", tracesDir(sb.root)]);
    const afterReport = JSON.parse(after.stdout) as {
      files: { problems: { kind: string; line: number }[] }[];
    };
    assert.deepEqual(
      afterReport.files.flatMap((f) => f.problems),
      [],
      `seed ${seed}: problems after resume (torn before: ${torn.join(", ")}):\n${after.stdout}`,
    );
    return { seed, killedAfter: received, committed };
  } finally {
    await server.close();
    await sb.cleanup();
  }
}

async function sessionsIn(dir: string): Promise<string[]> {
  const ids = new Set<string>();
  try {
    for await (const d of Deno.readDir(dir)) {
      if (!d.isDirectory || d.name.startsWith(".")) continue;
      for await (const f of Deno.readDir(join(dir, d.name))) {
        const m = /^(session-.+)_\d{3}\.jsonl$/.exec(f.name);
        if (m) ids.add(m[1]!);
      }
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return [...ids];
}

/**
 * The context the resumed request must carry, from what the server received
 * before the crash and which records reached the trace: with `committed`
 * rounds, the last committed request's context, its scripted answer, and
 * for each of its calls the output the trace holds (else the placeholder);
 * with none, the prompt if it was written. Then the new prompt.
 */
function expectedContext(
  server: ModelServer,
  turns: ScriptedTurn[],
  before: OmniMessage[],
  committed: number,
): Atom[] {
  if (committed === 0) {
    const wrote = before.some((m) =>
      m.type === "model_msg" && m.payload.type === "text" && m.payload.text === PROMPT
    );
    const meta = before[0]!.payload as { system_prompt: string };
    const system: Atom = { role: "system", text: meta.system_prompt };
    return [system, ...(wrote ? [userAtom(PROMPT)] : []), userAtom("continue")];
  }
  const last = turns[committed - 1]!;
  const outputs = new Map<string, string>();
  for (const m of before) {
    if (m.type === "model_msg" && m.payload.type === "tool_call_output") {
      outputs.set(m.payload.tool_call_id, m.payload.output);
    }
  }
  return [
    ...requestAtoms(server, committed - 1),
    answerAtom(last),
    ...callIds(last).map((id): Atom => ({
      role: "tool",
      id,
      text: outputs.get(id) ?? INTERRUPTED_OUTPUT,
    })),
    userAtom("continue"),
  ];
}

for (let start = 1; start <= ITERATIONS; start += BATCH) {
  const seeds = Array.from({ length: BATCH }, (_, i) => start + i);
  Deno.test(`a run killed with SIGKILL at a random point resumes with every committed turn (seeds ${seeds[0]}–${seeds.at(-1)})`, async () => {
    const outcomes = await Promise.all(seeds.map(crashAndResume));
    // Each seed either resumed or was killed before anything was recorded.
    assert.equal(outcomes.length, BATCH);
    assert.ok(outcomes.some((o) => o !== null), "at least one kill left a trace to resume");
  });
}
